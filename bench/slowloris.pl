#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use List::Util                qw(max);
use Perennial::Bench::Attack  qw(start_attack stop_attack time_requests);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Record  qw(record);
use Perennial::Bench::Servers qw(start_server stop_server);

# Slow clients against a normal one (issue 17): each server with a fixed pool, a normal client
# making sequential requests (a new connection each) for --seconds, first alone, then beside
# 300 slowloris connections (a header byte every 5 s), then beside those and 50 slow readers (a
# 16 MB response read at 1 KB/s). Prints the normal client's p50, p99 and longest request, and
# p99 under attack against p99 alone (the goal: at most 2x). Every phase is bounded.

my %opt = (
    workers   => 8,
    slowloris => 300,
    every     => 5,
    readers   => 50,
    seconds   => 20,
    servers   => 'perennial,apache-psgi,starman,uwsgi'
);
options(
    \%opt,
    'Usage: perl bench/slowloris.pl [--workers 8] [--slowloris 300] [--every 5] [--readers 50] '
        . '[--seconds 20] [--servers perennial,apache-psgi,starman,uwsgi] [--record FILE]',
    'workers=i',
    'slowloris=i',
    'every=f',
    'readers=i',
    'seconds=i',
    'servers=s',
    'record=s'
);
my $app = "$FindBin::RealBin/apps/attack.psgi";
printf "attack.psgi, %d workers each; the normal client's requests (new connection each), "
    . "%d s a phase\n", $opt{workers}, $opt{seconds};
printf "%-12s %-28s %9s %9s %9s %9s %7s\n", 'server', 'beside', 'requests', 'p50 ms', 'p99 ms',
    'max ms', 'failed';
my %result;
for my $name (split /,/, $opt{servers}) {
    my $srv    = start_server($name, app => $app, workers => $opt{workers}, keepalive => 1);
    my @phases = (['nothing', 0, 0], ["$opt{slowloris} slowloris", $opt{slowloris}, 0]);
    push @phases,
        ["$opt{slowloris} slowloris, $opt{readers} readers", $opt{slowloris}, $opt{readers}]
        if $opt{readers};
    for my $phase (@phases) {
        my ($label, $slow, $readers) = @$phase;
        my $attack = ($slow || $readers) && start_attack(
            port      => $srv->{port},
            slowloris => $slow,
            every     => $opt{every},
            readers   => $readers,
            path      => '/big',
            read_rate => 1024,
            seconds   => $opt{seconds} + 5
        );
        sleep 2 if $attack;    # Every attacker connected and holding what it holds
        my ($took, $failed) = time_requests($srv->{port}, '/', $opt{seconds});
        stop_attack($attack) if $attack;
        my @t   = sort { $a <=> $b } @$took;
        my %fig = (
            requests => scalar @t,
            p50_ms   => 1000 * ($t[int($#t * 0.5)]  // 0),
            p99_ms   => 1000 * ($t[int($#t * 0.99)] // 0),
            max_ms   => 1000 * (max(@t)             // 0),
            failed   => $failed
        );
        $result{$name}{$label} = \%fig;
        printf "%-12s %-28s %9d %9.1f %9.1f %9.1f %7d\n", $name, $label,
            @fig{qw(requests p50_ms p99_ms max_ms failed)};
    }
    stop_server($srv);
}
for my $name (sort keys %result) {
    my $r     = $result{$name};
    my $alone = $r->{nothing}{p99_ms} || 1;
    printf "%-12s p99 beside %s: %.1fx alone (goal: at most 2x)\n", $name, $_,
        $r->{$_}{p99_ms} / $alone
        for grep { $_ ne 'nothing' } sort keys %$r;
}
record($opt{record}, 'slowloris', \%result);
