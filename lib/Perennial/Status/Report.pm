package Perennial::Status::Report;
use v5.36;
use Exporter    qw(import);
use POSIX       qw(strftime);
use Time::HiRes ();
use Perennial::SizeLimit;

# Reads a scoreboard into totals and renders them as text, as `apachectl status` does

our @EXPORT_OK = qw(summary text);

sub summary ($board) {
    my (undef, $slots, $manager, $started, $generation) = $board->header_values;
    my %sum = (
        manager_pid => $manager,
        started     => $started,
        generation  => $generation,
        uptime      => Time::HiRes::time() - $started,
        busy        => 0,
        idle        => 0,
        processes   => 0,
        accesses    => 0,
        bytes       => 0,
        scoreboard  => '',
        workers     => []
    );
    for my $i (0 .. $slots - 1) {
        my $slot = $board->slot($i);
        $sum{accesses} += $slot->{slot_requests};
        $sum{bytes}    += $slot->{slot_bytes};
        $sum{scoreboard} .= $slot->{state};
        next if $slot->{state} eq '.';
        $sum{processes}++;
        $slot->{memory} = Perennial::SizeLimit::memory($slot->{pid}) if $slot->{pid};
        if   ($slot->{state} eq '_') { $sum{idle}++ }
        else                         { $sum{busy}++ }
        push @{$sum{workers}}, $slot;
    }
    $sum{scoreboard} =~ s/\.+\z//;
    return \%sum;
}

sub text ($board) {
    my $s   = summary($board);
    my $out = sprintf "Perennial status, manager pid %d, generation %d\n",
        @$s{qw(manager_pid generation)};
    $out .= sprintf "Started: %s\nUptime: %d seconds\n",
        strftime('%Y-%m-%d %H:%M:%S', localtime $s->{started}),
        $s->{uptime};
    $out .= sprintf "Total accesses: %d - Total traffic: %.1f kB\n", $s->{accesses},
        $s->{bytes} / 1024;
    $out .= sprintf "%d requests currently being processed, %d idle workers\n\n",
        @$s{qw(busy idle)};
    $out .= "$s->{scoreboard}\n\n";
    $out
        .= "Scoreboard key: \"_\" waiting for connection, \"S\" starting up, \"R\" reading request,\n"
        . "\"W\" sending reply, \"K\" keepalive (read), \"L\" logging, \"C\" closing connection,\n"
        . "\"G\" gracefully finishing, \"I\" idle cleanup of worker, \".\" open slot with no current process\n\n";
    $out .= sprintf "%-5s %-7s %-5s %-3s %8s %10s %9s %8s %8s %8s %8s %-15s %s\n", 'Slot', 'PID',
        'Gen', 'M', 'Acc', 'Bytes', 'Last(ms)', 'RSS(kB)', 'PSS(kB)', 'Shared', 'Private', 'Client',
        'Request';
    my %total;

    for my $w (@{$s->{workers}}) {
        my $m = $w->{memory} // {};
        $total{$_} += $m->{$_} // 0 for qw(rss pss shared private);
        $out .= sprintf "%-5d %-7d %-5d %-3s %8d %10d %9.1f %8s %8s %8s %8s %-15s %s\n",
            @$w{qw(slot pid generation state requests bytes)}, $w->{last_micros} / 1000,
            (map { $m->{$_} // '-' } qw(rss pss shared private)), $w->{client} || '-',
            $w->{request} || '-';
    }
    $out
        .= sprintf "\nWorkers' memory: RSS %d kB, PSS %d kB, shared %d kB, private %d kB "
        . "(from /proc/PID/smaps_rollup)\n", @total{qw(rss pss shared private)}
        if %total;
    return $out;
}

1;

__END__

=head1 NAME

Perennial::Status::Report - totals and a text view of the scoreboard

=head1 SYNOPSIS

    use Perennial::Status::Report qw(summary text);
    print text(Perennial::Scoreboard->attach($file));

=head1 DESCRIPTION

Adds up a scoreboard as Apache's mod_status does: total accesses and traffic over each slot's
life, busy and idle workers, and the scoreboard string of state letters.

=head1 FUNCTIONS

=head2 summary

    my $s = summary($board);    # {busy => 1, idle => 4, accesses => 1200, scoreboard => 'W____', ...}

=head2 text

    print text($board);

The summary and one line per worker, as C<apachectl status> shows them, with each worker's
memory from C</proc/PID/smaps_rollup> in kB: resident (RSS), proportional (PSS: shared pages
divided among the processes that map them), shared with other processes, and private (what
retiring the worker would give back). Memory shows as C<-> for workers of another user.

=cut
