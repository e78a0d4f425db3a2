#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Cwd                       qw(abs_path);
use File::Temp                qw(tempdir);
use Time::HiRes               ();
use Perennial::Bench::Servers qw(start_server stop_server);
use Perennial::Bench::Ab      qw(run_in_turn);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Record  qw(record);

# System calls per request, as `strace -c` counts them on every process of a server (manager
# and one worker; Apache with -X, Perennial's scripts with --workers 0): ab sends N sequential
# requests after a warm-up, each on a new connection, then N on kept-alive connections (wrk's
# one client bounded in requests, HTTP/1.1: ab -k's HTTP/1.0 keep-alive is not kept by every
# server; the server with KeepAlive On; MaxKeepAliveRequests 100 for the scripts' servers, so a new
# connection every 100 requests). The manager's own calls in those seconds are counted too (a
# few a second). --record FILE keeps the figures for bench/goals.pl.

my %opt = (requests => 2000, what => 'psgi,scripts');
options(\%opt,
    'Usage: perl bench/syscalls.pl [--requests 2000] [--what psgi,scripts] [--record FILE]',
    'requests=i', 'what=s', 'record=s');
my $hello   = abs_path("$FindBin::RealBin/apps/hello.psgi");
my $scripts = abs_path("$FindBin::RealBin/../examples/cgi-bin");
my %rows    = (
    psgi => [
        ['uWSGI hello.psgi',     'uwsgi',     '/'],
        ['Starlet hello.psgi',   'starlet',   '/'],
        ['Perennial hello.psgi', 'perennial', '/'],
    ],
    scripts => [
        ['Apache ModPerl::Registry', 'apache',            '/registry/hello.pl'],
        ['Perennial Registry',       'perennial-scripts', '/registry/hello.pl'],
        ['Apache ModPerl::PerlRun',  'apache',            '/perlrun/hello.pl'],
        ['Perennial PerlRun',        'perennial-scripts', '/perlrun/hello.pl'],
    ],
);
my @rows = map { @{$rows{$_} // die "--what: '$_' is not psgi or scripts\n"} } split /,/,
    $opt{what};

my (@table, %recorded);
for my $row (@rows) {
    my ($label, $server, $path) = @$row;
    my @per   = (_count($server, $path, 0), _count($server, $path, 1));
    my @shown = map { sprintf '%.1f', $_ } @per;
    printf STDERR "%-26s %6s new connection, %6s kept alive\n", $label, @shown;
    push @table, [$label, @shown];
    $recorded{$label} = {off => $per[0], on => $per[1]};
}
record($opt{record}, 'syscalls', \%recorded);
say '';
say "system calls per request (strace -c on every process of the server, $opt{requests} "
    . 'sequential requests after 50 to warm up)';
say sprintf '%-26s %16s %12s', 'server / mode', 'new connection', 'kept alive';
say sprintf '%-26s %16s %12s', @$_ for @table;

# The calls of N requests on a server started for them, each on a new connection or all on one
sub _count ($server, $path, $keepalive) {
    my $srv = start_server(
        $server,
        workers   => $server eq 'perennial-scripts' ? 0 : 1,
        single    => 1,
        keepalive => $keepalive,
        scripts   => $scripts,
        app       => $hello,
        probe     => $path,
    );
    my %load = (port => $srv->{port}, path => $path, keepalive => $keepalive);
    run_in_turn(%load, requests => 50, seconds => 30);
    my $out    = tempdir(CLEANUP => 1) . '/strace.txt';
    my @pids   = _group($srv->{pid});
    my $strace = fork // die "Can't fork: $!\n";
    if (!$strace) {
        open(STDERR, '>', "$out.log") or die;
        exec 'strace', '-c', '-f', '-o', $out, map { ('-p', $_) } @pids or die "strace: $!\n";
    }
    _attached("$out.log", scalar @pids);
    my $r = run_in_turn(%load, requests => $opt{requests}, seconds => 120);
    kill 'INT', $strace;
    waitpid $strace, 0;
    stop_server($srv);
    die "$server: $r->{failed} failed requests\n" if $r->{failed};
    open(my $fh, '<', $out) or die "Can't read strace's count: $!\n";
    my ($total) = map { /^\s*100\.00\s+\S+\s+\S+\s+(\d+)\s+(?:\d+\s+)?total/ ? $1 : () } <$fh>;
    die "$server: strace counted nothing\n" unless $total;
    return $total / $opt{requests};
}

# Every process of the server's process group
sub _group ($pgid) {
    opendir(my $dh, '/proc') or die "Can't read /proc: $!\n";
    return grep { /\A\d+\z/ && ((_stat_fields($_))[4] // -1) == $pgid } readdir $dh;
}

sub _stat_fields ($pid) {
    open(my $fh, '<', "/proc/$pid/stat") or return;
    my $line = <$fh> // return;
    $line =~ s/\A\d+ \(.*\) //s;
    return (undef, undef, split ' ', $line);
}

# strace says "Process N attached" for each process: the count starts once all are
sub _attached ($log, $n) {
    my $until = Time::HiRes::time() + 10;
    while (Time::HiRes::time() < $until) {
        open(my $fh, '<', $log) or next;
        my $seen = grep {/attached/} <$fh>;
        return if $seen >= $n;
        Time::HiRes::sleep(0.1);
    }
    die "strace did not attach to the server within 10 s\n";
}
