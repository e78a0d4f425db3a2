#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Perennial::Bench::Servers qw(start_server stop_server);
use Perennial::Bench::Wrk     qw(run_wrk);
use Perennial::Bench::Options qw(options);

# Hello world over PSGI: Perennial, Starman and uWSGI's psgi plugin with the same number of
# workers, each driven by wrk on loopback in one run, keep-alive off and on. Prints requests/s,
# latency and the ratios. Every load is bounded by wrk's -d.

my %opt = (
    workers     => 16,
    connections => 16,
    duration    => 10,
    servers     => 'perennial,starlet,starman,uwsgi'
);
options(
    \%opt,
    'Usage: perl bench/hello.pl [--workers 16] [--connections 16] [--duration 10] '
        . '[--servers perennial,starlet,starman,uwsgi]',
    'workers=i',
    'connections=i',
    'duration=i',
    'servers=s'
);
my $app     = "$FindBin::RealBin/apps/hello.psgi";
my @servers = split /,/, $opt{servers};
my %result;

for my $ka (0, 1) {
    for my $name (@servers) {
        my $srv     = start_server($name, app => $app, workers => $opt{workers}, keepalive => $ka);
        my @headers = $ka ? () : ('Connection: close');
        run_wrk(
            port        => $srv->{port},
            connections => $opt{connections},
            duration    => 2,
            headers     => \@headers
        );
        my $r = run_wrk(
            port        => $srv->{port},
            connections => $opt{connections},
            duration    => $opt{duration},
            headers     => \@headers
        );
        stop_server($srv);
        $result{$name}{$ka} = $r;
        printf STDERR "%-10s keep-alive %-3s %9.0f req/s\n", $name, $ka ? 'on' : 'off', $r->{rps};
    }
}

say '';
say
    "hello.psgi, $opt{workers} workers each, wrk -t2 -c$opt{connections} -d$opt{duration}s on 127.0.0.1";
say sprintf '%-10s %-10s %10s %10s %10s %8s', 'server', 'keepalive', 'req/s', 'avg ms', 'p99 ms',
    'errors';
for my $ka (0, 1) {
    for my $name (@servers) {
        my $r = $result{$name}{$ka};
        say sprintf '%-10s %-10s %10.0f %10.2f %10.2f %8d', $name, $ka ? 'on' : 'off',
            @$r{qw(rps avg_ms p99_ms errors)};
    }
}
say '';
for my $ka (0, 1) {
    my $base = $result{perennial}{$ka} or last;
    for my $other (grep { $_ ne 'perennial' } @servers) {
        my $r = $result{$other}{$ka};
        say sprintf 'perennial / %-8s keep-alive %-3s %5.2fx', $other, $ka ? 'on' : 'off',
            $r->{rps} ? $base->{rps} / $r->{rps} : 0;
    }
}
