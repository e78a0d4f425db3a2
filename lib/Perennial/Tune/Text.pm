package Perennial::Tune::Text;
use v5.36;
use POSIX                    qw(strftime);
use Perennial::Bench::Report qw(table);

# What perennial tune prints: the measurements, the arithmetic, the sweep and the reasons,
# then the settings as a config fragment

my @ORDER = qw(MaxClients StartServers MinSpareServers MaxSpareServers MaxRequestsPerChild
    MaxUnsharedSize);

sub report ($r, $urls) {
    my ($m, $f, $ram, $sweep) = @$r{qw(memory formula ram sweep)};
    my $out = "Measured with @{[scalar @{$m->{workers}}]} workers and $m->{requests} requests "
        . "(ab) over: @$urls\n\n";
    $out .= sprintf "%-5s %-7s %9s %9s %9s %9s %9s\n", qw(slot pid requests), 'RSS KB', 'PSS KB',
        'shared', 'private';
    for my $i (0 .. $#{$m->{workers}}) {
        my ($w, $b) = ($m->{workers}[$i], $m->{before}[$i]);
        $out .= sprintf "%-5d %-7d %9d %9d %9d %9d %9d (was %d)\n",
            @$w{qw(slot pid requests rss pss shared private)},
            $b->{private};
    }
    $out .= sprintf "\nPrivate memory grew %.3f KB per request.\n", $m->{growth_kb_per_request};
    $out .= sprintf "Total_RAM            = %d KB (%s)\n", $ram->{kb}, $ram->{from};
    $out .= sprintf "Max_Process_Size     = %d KB (the largest worker's RSS)\n",
        $f->{max_process_kb};
    $out .= sprintf "Shared_RAM_per_Child = %d KB (the smallest shared size)\n", $f->{shared_kb};
    $out
        .= sprintf
        "MaxClients = (Total_RAM - Max_Process_Size) / (Max_Process_Size - Shared_RAM_per_Child)\n"
        . "           = (%d - %d) / (%d - %d) = %d\n",
        @$f{qw(ram_kb max_process_kb max_process_kb shared_kb max_clients)};
    $out .= sprintf "Without sharing it would be Total_RAM / Max_Process_Size = %d.\n",
        $f->{no_sharing};
    $out
        .= "\nThroughput against MaxClients ("
        . $sweep->{results}[0]{tool}
        . "):\n\n"
        . table($sweep->{results});
    $out
        .= defined $sweep->{knee}
        ? "Knee: MaxClients $sweep->{knee}.\n"
        : "No knee: too few points in the sweep (memory allows fewer than three values).\n";
    $out .= "\nWhy:\n" . join('', map {"- $_\n"} @{$r->{recommend}{reasons}});
    return $out;
}

sub fragment ($r, $urls) {
    my $set = $r->{recommend}{settings};
    my $out
        = '# Written by perennial tune on '
        . strftime('%Y-%m-%d %H:%M', localtime)
        . " from measurements of @$urls\n";
    $out .= sprintf "%-20s %s\n", $_, $set->{$_} for grep { defined $set->{$_} } @ORDER;
    return $out;
}

1;

__END__

=head1 NAME

Perennial::Tune::Text - the report and the config fragment of perennial tune

=head1 SYNOPSIS

    print Perennial::Tune::Text::report($result, \@urls);
    print Perennial::Tune::Text::fragment($result, \@urls);

=head1 FUNCTIONS

=head2 fragment

The recommended settings as config lines, ready for C<Include>.

=head2 report

The workers' memory, the growth per request, the formula with its numbers, the sweep's table
and knee, and the reasons.

=cut
