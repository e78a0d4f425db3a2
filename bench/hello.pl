#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Perennial::Bench::Servers qw(group_cpu settle start_server stop_server);
use Perennial::Bench::Wrk     qw(run_wrk);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Record  qw(record);

# Hello world over PSGI: Perennial, Starlet, Starman and uWSGI's psgi plugin with the same
# number of workers, each driven by wrk on loopback in one run, keep-alive off and on. The
# servers take turns, a round at a time in alternating order, and each one's median run is
# given: one pass in a fixed order swings by a third on a shared machine. Prints requests/s,
# latency, the servers' CPU per request (user and kernel) and the ratios. Every load is
# bounded by wrk's -d. --record FILE keeps the figures for bench/goals.pl.

my %opt = (
    workers     => 16,
    connections => 16,
    duration    => 10,
    rounds      => 3,
    servers     => 'perennial,starlet,starman,uwsgi'
);
options(
    \%opt,
    'Usage: perl bench/hello.pl [--workers 16] [--connections 16] [--duration 10] '
        . '[--rounds 3] [--servers perennial,starlet,starman,uwsgi] [--record FILE]',
    'workers=i',
    'rounds=i',
    'connections=i',
    'duration=i',
    'servers=s',
    'record=s'
);
my $app     = "$FindBin::RealBin/apps/hello.psgi";
my @servers = split /,/, $opt{servers};
my %result;

for my $ka (0, 1) {
    my @headers = $ka ? () : ('Connection: close');
    my %srv
        = map { ($_ => start_server($_, app => $app, workers => $opt{workers}, keepalive => $ka)) }
        @servers;
    for my $name (@servers) {    # Every worker warm
        run_wrk(
            port        => $srv{$name}{port},
            connections => $opt{connections},
            duration    => 2,
            headers     => \@headers
        );
    }
    my %runs;
    for my $round (1 .. $opt{rounds}) {
        for my $name ($round % 2 ? @servers : reverse @servers) {
            my @cpu = group_cpu($srv{$name}{pid});
            my $r   = run_wrk(
                port        => $srv{$name}{port},
                connections => $opt{connections},
                duration    => $opt{duration},
                headers     => \@headers,
                starved     => $ka
            );
            _cpu_per_request($r, \@cpu, [group_cpu($srv{$name}{pid})]);
            settle($srv{$name});    # What the load left queued, answered before the next one
            push @{$runs{$name}}, $r;
            printf STDERR "round %d %-10s keep-alive %-3s %9.0f req/s\n", $round, $name,
                $ka ? 'on' : 'off', $r->{rps};
        }
    }
    stop_server($_) for values %srv;
    $result{$_}{$ka} = _median_run($runs{$_}) for @servers;
}

say '';
say
    "hello.psgi, $opt{workers} workers each, wrk -t2 -c$opt{connections} -d$opt{duration}s on 127.0.0.1, "
    . "the median of $opt{rounds} rounds";
say sprintf '%-10s %-10s %10s %10s %10s %8s %8s %8s %8s', 'server', 'keepalive', 'req/s',
    'avg ms', 'p99 ms', 'errors', 'starved', 'user us', 'sys us';
for my $ka (0, 1) {
    for my $name (@servers) {
        my $r = $result{$name}{$ka};
        say sprintf '%-10s %-10s %10.0f %10.2f %10.2f %8d %8s %8.1f %8.1f', $name,
            $ka ? 'on'                              : 'off', @$r{qw(rps avg_ms p99_ms errors)},
            $ka ? "$r->{starved}/$opt{connections}" : '-',   @$r{qw(user_us system_us)};
    }
}
say "(starved: wrk's kept-alive connections that had received nothing a third and two thirds "
    . 'into the run, in the median run; a server that leaves clients waiting serves fewer '
    . 'of them faster. user us, sys us: the CPU time all the server\'s processes used during '
    . 'that run, in user space and in the kernel, divided by the requests wrk completed)';
say '';
for my $ka (0, 1) {
    my $base = $result{perennial}{$ka} or last;
    for my $other (grep { $_ ne 'perennial' } @servers) {
        my $r = $result{$other}{$ka};
        say sprintf 'perennial / %-8s keep-alive %-3s %5.2fx', $other, $ka ? 'on' : 'off',
            $r->{rps} ? $base->{rps} / $r->{rps} : 0;
    }
}
record(
    $opt{record},
    'hello',
    {   workers     => $opt{workers},
        connections => $opt{connections},
        map {
            my $name = $_;
            (   $name => {
                    (map { (($_ ? 'on' : 'off') => $result{$name}{$_}{rps}) } 0, 1),
                    starved_on => $result{$name}{1}{starved}
                }
            )
        } @servers
    }
);

# The server's CPU in microseconds per completed request, user and system, from its process
# group's times before and after the run: the kernel's part (reads, writes, the loopback's
# delivery and wake-ups) is half of a kept-alive request or more, in every server
sub _cpu_per_request ($r, $before, $after) {
    my $n = $r->{completed} || 1;
    @$r{qw(user_us system_us)} = map { ($after->[$_] - $before->[$_]) / $n * 1e6 } 0, 1;
    return;
}

# The run with the median requests per second
sub _median_run ($runs) {
    my @sorted = sort { $a->{rps} <=> $b->{rps} } @$runs;
    return $sorted[$#sorted / 2];
}
