#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Cwd                           qw(abs_path);
use Perennial::Bench::Servers     qw(start_server stop_server);
use Perennial::Bench::Load        qw(run_load);
use Perennial::SizeLimit          ();
use Perennial::Bench::Options     qw(options);
use Perennial::Bench::Record      qw(record);
use Perennial::Bench::ScriptFloor qw(floor_start floor_serve floor_stop);

# What a worker's memory becomes after serving: the examples' scripts under Registry, in
# Apache's ModPerl::Registry children and in Perennial's workers (the same httpd.conf fragment,
# the same number of workers), measured from /proc/PID/smaps_rollup when the workers are fresh
# and again after N requests that take turns over the scripts. Private memory is what a worker
# does not share with the others (copy-on-write erosion shows there); PSS charges each its
# share of the rest. Beside them, the floor: a plain perl that forks as many workers and has
# them compile and run the same scripts the same number of times, with CGI.pm's reset and
# STDOUT on a string but no server (Perennial::Bench::ScriptFloor), so that what is above it
# is the server's. --preload NAME: a module both load before the workers start (PerlModule),
# as a tuned mod_perl site's startup.pl loads CGI.pm. --preload-scripts: the scripts compiled
# before the workers start too (PerlPreloadScripts; ModPerl::RegistryLoader in Apache's
# startup file; the floor's parent), as such a site's startup.pl may do. --record FILE keeps the figures for
# bench/goals.pl.

my %opt = (
    requests => 3000,
    workers  => 2,
    scripts  => 'hello.pl,form.pl,count.pl,closure.pl,heavy.pl,cwd.pl'
);
options(
    \%opt,
    'Usage: perl bench/memory.pl [--requests 3000] [--workers 2] '
        . '[--scripts hello.pl,form.pl,...] [--preload CGI] [--preload-scripts] [--record FILE]',
    'requests=i',
    'workers=i',
    'scripts=s',
    'preload=s',
    'preload-scripts',
    'record=s'
);
my $dir     = abs_path("$FindBin::RealBin/../examples/cgi-bin");
my @scripts = split /,/, $opt{scripts};
my @rows;
for my $row (['Apache ModPerl::Registry', 'apache'], ['Perennial Registry', 'perennial-scripts']) {
    my ($label, $server) = @$row;
    my $srv = start_server(
        $server,
        workers => $opt{workers},
        preload => $opt{preload},
        scripts => $dir,
        ($opt{'preload-scripts'} ? (preload_scripts => \@scripts) : ()),
        probe => '/registry/hello.pl'
    );
    my @workers = _workers($srv->{pid});
    die "$label: no workers found\n" unless @workers;
    my $fresh  = _least(@workers);    # The probe that found the server up went to one of them
    my $failed = _serve(sub ($script, $count) { _ab($srv->{port}, $script, $count) });
    my $after  = _average(_workers($srv->{pid}));
    stop_server($srv);
    printf STDERR "%-26s fresh %6d KB private, after %6d KB private (%d failed)\n", $label,
        $fresh->{private}, $after->{private}, $failed;
    push @rows, [$label, $fresh, $after, $failed];
}
{
    my $label = 'perl alone (the floor)';
    my $floor = floor_start(
        dir     => $dir,
        workers => $opt{workers},
        preload => $opt{preload},
        ($opt{'preload-scripts'} ? (scripts => \@scripts) : ())
    );
    my $fresh  = _least(_workers($floor->{pid}));
    my $failed = _serve(sub ($script, $count) { floor_serve($floor, $script, $count) });
    my $after  = _average(_workers($floor->{pid}));
    floor_stop($floor);
    printf STDERR "%-26s fresh %6d KB private, after %6d KB private (%d failed)\n", $label,
        $fresh->{private}, $after->{private}, $failed;
    push @rows, [$label, $fresh, $after, $failed];
}
say '';
say
    "worker memory (KB, smaps_rollup): fresh (the least of $opt{workers} workers), and average after "
    . "$opt{requests} requests over @scripts"
    . ($opt{preload}           ? ", $opt{preload} preloaded"    : '')
    . ($opt{'preload-scripts'} ? ', the scripts compiled first' : '');
say sprintf '%-26s %9s %9s %9s %9s %9s %7s', 'server', 'fresh pri', 'private', 'pss', 'rss',
    'shared', 'failed';
for my $row (@rows) {
    my ($label, $fresh, $after, $failed) = @$row;
    say sprintf '%-26s %9d %9d %9d %9d %9d %7d', $label, $fresh->{private},
        @$after{qw(private pss rss shared)}, $failed;
}
record(
    $opt{record},
    'memory',
    {   requests => $opt{requests},
        workers  => $opt{workers},
        preload  => $opt{preload},
        ($opt{'preload-scripts'} ? (preload_scripts => 1) : ()),
        map { ($_->[0] => {fresh => $_->[1]{private}, after => $_->[2]{private}}) } @rows
    }
);

# The requests, in turns of 25 per script; the failed ones (a script that fails under one
# server is counted, not fatal: cwd.pl's open of a file beside it does under Apache's Registry)
sub _serve ($run) {
    my ($done, $failed) = (0, 0);
    while ($done < $opt{requests}) {
        for my $script (@scripts) {
            $failed += $run->($script, 25);
            last if ($done += 25) >= $opt{requests};
        }
    }
    return $failed;
}

# A server's turn: ab, as many connections as workers
sub _ab ($port, $script, $count) {
    my $r = run_load(
        tool        => 'ab',
        url         => "http://127.0.0.1:$port/registry/$script",
        concurrency => $opt{workers},
        requests    => $count,
        seconds     => 30
    );
    return $r->{failed};
}

# The server's worker processes: the children of its main process
sub _workers ($pid) {
    opendir(my $dh, '/proc') or die "Can't read /proc: $!\n";
    return grep { /\A\d+\z/ && _parent($_) == $pid } readdir $dh;
}

sub _parent ($pid) {
    open(my $fh, '<', "/proc/$pid/stat") or return -1;
    my $line = <$fh> // return -1;
    return $line =~ /\) \S+ (\d+)/ ? $1 : -1;
}

# The worker with the least private memory: a fresh one, that has served nothing yet
sub _least (@pids) {
    my @m = sort { $a->{private} <=> $b->{private} }
        grep {defined} map { Perennial::SizeLimit::memory($_) } @pids;
    die "no worker's memory could be read\n" unless @m;
    return $m[0];
}

sub _average (@pids) {
    my @m = grep {defined} map { Perennial::SizeLimit::memory($_) } @pids;
    die "no worker's memory could be read\n" unless @m;
    my %sum;
    for my $m (@m) { $sum{$_} += $m->{$_} for qw(rss pss shared private) }
    return {map { $_ => int($sum{$_} / @m) } keys %sum};
}
