package Perennial::Bench::Report;
use v5.36;
use Exporter qw(import);
use JSON::PP ();

# The results of a bench run as the mod_perl Guide printed them (the varied settings, then
# avtime completed failed rps, with the settings that did not vary below), as CSV and JSON,
# and where the curve bends

our @EXPORT_OK = qw(csv json knee series table);

my @FIGURES = (
    [avtime    => 'avg_ms',    '%.2f'],
    [p50       => 'p50_ms',    '%.1f'],
    [p99       => 'p99_ms',    '%.1f'],
    [completed => 'completed', '%d'],
    [failed    => 'failed',    '%d'],
    [rps       => 'rps',       '%.1f'],
);

# The columns that tell rows apart: each varied setting (or the target), then URL and
# concurrency when there are several
sub _keys ($results) {
    my @keys;
    my %seen;
    for my $r (@$results) {
        for my $s (@{$r->{settings}}) { push @keys, $s->[0] unless $seen{$s->[0]}++ }
    }
    push @keys, 'target' if grep { defined $_->{target} } @$results;
    for my $k (qw(url concurrency)) {
        my %values = map { $_->{$k} => 1 } @$results;
        push @keys, $k if keys %values > 1;
    }
    return @keys;
}

sub _value ($r, $key) {
    return $r->{$key} if $key =~ /\A(?:target|url|concurrency)\z/;
    my ($s) = grep { $_->[0] eq $key } @{$r->{settings}};
    return $s ? $s->[1] : '';
}

sub table ($results, $fixed = []) {
    my @keys = _keys($results);
    @keys = ('url') unless @keys;    # One row: name it by what was requested
    my @head = (@keys, map { $_->[0] } @FIGURES);
    my @rows = map {
        my $r = $_;
        [   (map { _value($r, $_) } @keys),
            map { defined $r->{$_->[1]} ? sprintf($_->[2], $r->{$_->[1]}) : '-' } @FIGURES
        ]
    } @$results;
    my @width = map {
        my $i   = $_;
        my ($w) = sort { $b <=> $a } map { length $_->[$i] } \@head, @rows;
        $w;
    } 0 .. $#head;
    my $line = sub (@cells) {
        join(' ', map { sprintf "%*s", $width[$_], $cells[$_] } 0 .. $#keys) . ' | '
            . join(' ', map { sprintf "%*s", $width[$_], $cells[$_] } @keys .. $#cells) . "\n";
    };
    my $out = $line->(@head);
    $out .= '-' x (length($out) - 1) . "\n";
    $out .= $line->(@$_) for @rows;
    my %varied = map  { $_ => 1 } @keys;
    my @same   = grep { !$varied{$_->[0]} } @$fixed;
    if (@same) {
        $out .= "\nNon-varying parameters:\n";
        $out .= sprintf "%-22s: %s\n", @$_ for @same;
    }
    return $out;
}

sub csv ($results) {
    my @keys = _keys($results);
    my @cols = (@keys, 'tool', map { $_->[1] } @FIGURES);
    my $out  = join(',', @cols) . "\n";
    for my $r (@$results) {
        $out .= join(',',
            map { _csv_cell($_) } (map { _value($r, $_) } @keys),
            $r->{tool}, map { $r->{$_->[1]} // '' } @FIGURES)
            . "\n";
    }
    return $out;
}

sub json ($results, $about = {}) {
    return JSON::PP->new->canonical->pretty->encode({%$about, results => $results});
}

# The measurements as curves against the first varied setting: one series per URL,
# concurrency and value of the other settings (or against the targets)
sub series ($results) {
    my ($x) = _keys($results);
    return () unless defined $x;
    my (%group, @order);
    for my $r (@$results) {
        my $name = join ', ',
            (map {"$_->[0] $_->[1]"} grep { $_->[0] ne $x } @{$r->{settings}}),
            "c=$r->{concurrency}", $r->{url};
        push @order, $name unless $group{$name};
        push @{$group{$name}}, {x => _value($r, $x), rps => $r->{rps}, avg_ms => $r->{avg_ms}};
    }
    return map { {name => $_, x => $x, points => $group{$_}} } @order;
}

# Where throughput stops rising: the first point after which no later point is 10% faster
# (less is within this kind of machine's noise).
# Returns its index, or undef for fewer than three points.
sub knee ($points) {
    return if @$points < 3;
    for my $i (0 .. $#$points - 1) {
        my ($best) = sort { $b <=> $a } map { $_->{rps} } @$points[$i + 1 .. $#$points];
        return $i if $best < $points->[$i]{rps} * 1.10;
    }
    return $#$points;
}

sub _csv_cell ($v) {
    $v //= '';
    return $v =~ /[",\n]/ ? '"' . ($v =~ s/"/""/gr) . '"' : $v;
}

1;

__END__

=head1 NAME

Perennial::Bench::Report - the table, CSV and JSON of a bench run, and its knee

=head1 SYNOPSIS

    print table($results, [[Concurrency => 16], [Requests => 2000]]);

     MaxClients | avtime  p50  p99 completed failed    rps
    ----------------------------------------------------
              1 | 310.21  308  350      2000      0   51.5
              2 | 157.80  155  190      2000      0  101.2

=head1 FUNCTIONS

=head2 csv, json

=head2 knee

    my $i = knee($series->{points});    # index of the point where throughput stops rising

The first point after which no later point has 10% more requests per second: past it, more
of the varied setting buys nothing but memory and latency. The last point when throughput was
still rising at the end of the sweep.

=head2 series

    for my $s (series($results)) { ... $s->{points} ... }

=head2 table

The mod_perl Guide's table: the varied settings, then C<avtime> (mean ms per request),
C<p50> and C<p99> (ms), C<completed>, C<failed> and C<rps>; the settings that did not vary
follow.

=cut
