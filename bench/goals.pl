#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Perennial::Bench::Record  qw(read_records);
use Perennial::Bench::Options qw(options);

# Issue 16's goals in one table, from the figures the bench scripts before it kept with
# --record (`make bench` runs them so): each goal's figure, the mark and whether it is met.
# Requests per second count only as ratios measured in one run; instructions per request are
# printed beside the peers' as the figure to judge a change by, without a mark of their own.

my $USAGE = 'Usage: perl bench/goals.pl RECORD-FILE';
options({}, $USAGE);
my $file = shift @ARGV // die "$USAGE\n";
my $rec  = read_records($file);

my @rows;
if (my $h = $rec->{hello}) {
    my $f = $h->{figures};
    for my $ka (qw(off on)) {
        for my $peer (['uwsgi', 'uWSGI', 1.0], ['starlet', 'Starlet', 1.3]) {
            my ($name, $label, $mark) = @$peer;
            push @rows,
                _at_least(
                "PSGI hello / $label, KeepAlive $ka",
                _ratio($f, 'perennial', $name, $ka),
                $mark, 'x', _rps($f, 'perennial', $name, $ka)
                );
        }
    }
}
else { push @rows, ['PSGI hello', 'not measured (bench/hello.pl --record)'] }

if (my $c = $rec->{cgi}) {
    my $f = $c->{figures};
    for my $ka (qw(off on)) {
        my $r = $f->{$ka} or next;
        for my $mode (qw(Registry PerlRun)) {
            my ($ours, $theirs) = ($r->{"Perennial $mode"}, $r->{"Apache ModPerl::$mode"});
            push @rows,
                _at_least(
                "$c->{figures}{script} $mode / ModPerl::$mode, KeepAlive $ka",
                $theirs->{wrk} ? $ours->{wrk} / $theirs->{wrk} : 0,
                1.25,
                'x',
                sprintf('%.0f / %.0f req/s', $ours->{wrk}, $theirs->{wrk})
                );
        }
    }
}
else { push @rows, ['Registry and PerlRun', 'not measured (bench/cgi.pl --record)'] }

# A mod_perl handler module: no ratio of its own in the issue's list; its mark is the issue's
# title, to lead Apache's mod_perl on the same work
if (my $h = $rec->{handler}) {
    for my $ka (qw(off on)) {
        my $r = $h->{figures}{$ka} or next;
        my ($ours, $theirs) = @$r{'Perennial mod_perl handler', 'Apache mod_perl handler'};
        push @rows,
            _at_least(
            "handler module / Apache mod_perl, KeepAlive $ka",
            $theirs->{wrk} ? $ours->{wrk} / $theirs->{wrk} : 0,
            1.0, 'x', sprintf('%.0f / %.0f req/s', $ours->{wrk}, $theirs->{wrk})
            );
    }
}
else { push @rows, ['handler module', 'not measured (bench/cgi.pl --what handler --record)'] }

if (my $s = $rec->{syscalls}) {
    for my $label (sort keys %{$s->{figures}}) {
        next unless $label =~ /\APerennial/;
        my $f = $s->{figures}{$label};
        push @rows, _at_most("system calls, $label, new connection", $f->{off}, 8, '');
        push @rows, _at_most("system calls, $label, kept alive",     $f->{on},  4, '');
    }
}
else { push @rows, ['system calls', 'not measured (bench/syscalls.pl --record)'] }

if (my $m = $rec->{memory}) {
    my $f      = $m->{figures};
    my $ours   = $f->{'Perennial Registry'}{after};
    my $apache = $f->{'Apache ModPerl::Registry'}{after};
    my $floor  = $f->{'perl alone (the floor)'}{after};
    my @beside = (
        (defined $apache ? "Apache's children $apache KB" : ()),
        (defined $floor  ? "perl alone $floor KB"         : ())
    );
    push @rows,
        _at_most(
        "private KB a worker after $f->{requests} Registry requests"
            . ($f->{preload} ? " ($f->{preload} preloaded)" : ''),
        $ours,
        1536,
        ' KB',
        join(', ', @beside)
        );
}
else { push @rows, ['memory', 'not measured (bench/memory.pl --record)'] }

say '';
say "Issue 16's goals, from the figures in $file";
say sprintf '%-58s %12s %10s %5s  %s', 'goal', 'figure', 'mark', 'met', 'beside';
for my $row (@rows) {
    if (@$row == 2) { say sprintf '%-58s %s', @$row; next }
    say sprintf '%-58s %12s %10s %5s  %s', @$row;
}

if (my $i = $rec->{instructions}) {
    say '';
    say 'user-space instructions per request (callgrind), the figure to judge a change by';
    for my $ka (qw(off on)) {
        my $f = $i->{figures}{$ka} or next;
        say "  KeepAlive $ka: " . join ', ',
            map { sprintf '%s %.0fk', $_, $f->{$_} / 1000 } sort keys %$f;
    }
}

sub _at_least ($what, $figure, $mark, $unit, $beside = '') {
    return [
        $what,
        sprintf('%.2f%s', $figure, $unit),
        ">= $mark$unit",
        $figure >= $mark ? 'yes' : 'no', $beside
    ];
}

sub _at_most ($what, $figure, $mark, $unit, $beside = '') {
    return [$what, 'not measured'] unless defined $figure;
    return [
        $what,
        sprintf('%.1f%s', $figure, $unit),
        "<= $mark$unit",
        $figure <= $mark ? 'yes' : 'no', $beside
    ];
}

sub _ratio ($f, $ours, $theirs, $ka) {
    my ($a, $b) = map { $f->{$_} && $f->{$_}{$ka} } $ours, $theirs;
    return $a && $b ? $a / $b : 0;
}

# Kept alive, with how many of wrk's connections each server left waiting (bench/hello.pl)
sub _rps ($f, $ours, $theirs, $ka) {
    my $rps = sprintf '%.0f / %.0f req/s', map { ($f->{$_} && $f->{$_}{$ka}) // 0 } $ours, $theirs;
    my @starved = map { $f->{$_} && $f->{$_}{starved_on} } $ours, $theirs;
    return $rps if $ka ne 'on' || grep { !defined } @starved;
    return "$rps, connections starved $starved[0] / $starved[1] of $f->{connections}";
}
