#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use List::Util                qw(max);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Paced   qw(run_paced);
use Perennial::Bench::Record  qw(record);
use Perennial::Bench::Servers qw(start_server stop_server);

# Idle kept-alive clients (issue 17): 4 workers, 50 clients that each make a request every
# 100 ms on a connection they keep, for 20 s, as browsers on a busy site come back. Under
# Apache prefork, Starman and uWSGI an idle connection holds its worker for KeepAliveTimeout, so
# most clients wait seconds for a worker that is only waiting too; Perennial parks idle
# connections outside its workers. Prints, per server, the wait for each request's first byte
# (p50, p99, the longest) and how many clients waited over a second at least once, beside
# Perennial with KeepAlive Off (the mark: p99 at most twice its) and with ParkKeepAlive Off
# (the worker holds its connection, as prefork does). Every run is bounded by --seconds.

my %opt = (
    workers  => 4,
    clients  => 50,
    interval => 0.1,
    seconds  => 20,
    servers  => 'perennial,perennial-unparked,apache-psgi,starman,uwsgi'
);
options(
    \%opt,
    'Usage: perl bench/idle.pl [--workers 4] [--clients 50] [--interval 0.1] [--seconds 20] '
        . '[--servers perennial,perennial-unparked,apache-psgi,starman,uwsgi] [--record FILE]',
    'workers=i',
    'clients=i',
    'interval=f',
    'seconds=i',
    'servers=s',
    'record=s'
);
my $app = "$FindBin::RealBin/apps/hello.psgi";

# What each line runs: the server, KeepAlive, and Perennial's own settings
my %RUN = (
    perennial            => ['perennial',   1],
    'perennial-unparked' => ['perennial',   1, ['ParkKeepAlive Off']],
    'perennial-ka-off'   => ['perennial',   0],
    'apache-psgi'        => ['apache-psgi', 1],
    starman              => ['starman',     1],
    uwsgi                => ['uwsgi',       1],
);
my @lines = ('perennial-ka-off', split /,/, $opt{servers});
printf "hello.psgi, %d workers each, %d clients each asking every %d ms on its own connection, "
    . "%d s\n", $opt{workers}, $opt{clients}, $opt{interval} * 1000, $opt{seconds};
printf "%-20s %-9s %9s %9s %9s %9s %12s %7s\n", 'server', 'keepalive', 'requests', 'p50 ms',
    'p99 ms', 'max ms', 'clients >1 s', 'failed';
my %result;
for my $line (@lines) {
    my ($server, $ka, $set) = @{$RUN{$line} // die "Unknown server '$line'\n"};
    my $srv = start_server(
        $server,
        app       => $app,
        workers   => $opt{workers},
        keepalive => $ka,
        set       => $set
    );
    my $r = run_paced(
        port      => $srv->{port},
        path      => '/',
        clients   => $opt{clients},
        interval  => $opt{interval},
        seconds   => $opt{seconds},
        keepalive => $ka
    );
    stop_server($srv);
    my @w   = sort { $a <=> $b } @{$r->{waits}};
    my %fig = (
        requests     => $r->{requests},
        p50_ms       => 1000 * ($w[int($#w * 0.5)]  // 0),
        p99_ms       => 1000 * ($w[int($#w * 0.99)] // 0),
        max_ms       => 1000 * (max(@w)             // 0),
        slow_clients => $r->{slow_clients},
        failed       => $r->{failed} + $r->{unanswered},
    );
    $result{$line} = \%fig;
    printf "%-20s %-9s %9d %9.1f %9.1f %9.1f %12d %7d\n", $line, $ka ? 'on' : 'off',
        @fig{qw(requests p50_ms p99_ms max_ms slow_clients failed)};
}
if (my $p = $result{perennial}) {
    my $off = $result{'perennial-ka-off'};
    printf "\nperennial, kept alive: %d clients waited over 1 s (goal: none); p99 %.1f ms against "
        . "%.1f ms with KeepAlive Off, %.2fx (goal: at most 2x)\n", $p->{slow_clients},
        $p->{p99_ms}, $off->{p99_ms}, $off->{p99_ms} ? $p->{p99_ms} / $off->{p99_ms} : 0;
}
record($opt{record}, 'idle', \%result);
