#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Config;
use Cwd                       qw(abs_path);
use File::Temp                qw(tempdir);
use IO::Socket::IP            ();
use POSIX                     ();
use Time::HiRes               ();
use Perennial::Bench::Servers qw(start_server stop_server);
use Perennial::Bench::Options qw(options);
use Perennial::SizeLimit      ();

# Where a worker's private memory comes from: which lines of Perl, in which phase of its life,
# write to the pages it shares with its manager (each such write copies a page: the
# copy-on-write erosion that bench/memory.pl measures as a whole). One worker of Perennial
# serving the examples' scripts under Registry, CGI.pm loaded before the fork as bench/memory.pl
# has it. The worker that answered the start-up probe is stopped, and its fresh successor is
# watched (bench/xs/PageWrites.xs, built here for the run): from its first request on, the
# first write to each shared page of its heap is noted with the Perl statement and op that
# made it. Phases: a first request of any kind (a 404), the first script request (hello.pl),
# the first request of each other script, then --requests more over all of them. Prints the
# pages each phase copied, by file, by statement and by op. --from-fork watches the worker
# from its fork on, its start the first phase (the server then runs with
# bench/xs/no-segv-block.c preloaded). --again protects each phase's copied pages again at
# the next phase, and says how many a later phase wrote to again, by file and by line: a page
# that only its own phase writes would stay shared with a process that went through that phase
# before the fork (a warm copy of a worker), and the last phase's are what every request
# writes. A diagnostic run by hand (Linux, root or the server's own user), not by make bench.

my %opt = (
    requests => 300,
    top      => 20,
    user     => 'www-data',
    scripts  => 'hello.pl,form.pl,count.pl,closure.pl,heavy.pl,cwd.pl'
);
options(
    \%opt,
    'Usage: perl bench/pages.pl [--requests 300] [--top 20] [--user www-data] '
        . '[--scripts hello.pl,form.pl,...] [--from-fork] [--again]',
    'from-fork',
    'again',
    'requests=i',
    'top=i',
    'user=s',
    'scripts=s'
);
my @scripts = split /,/, $opt{scripts};
my @PHASES  = (
    ($opt{'from-fork'} ? ("the worker's start") : ()),
    'first request (404)',
    "first script request ($scripts[0])",
    'first request of each other script',
    "$opt{requests} more requests"
);

my $build = _build();
my $notes = tempdir(CLEANUP => 1);
chmod 01777, $notes;
local $ENV{PERENNIAL_PAGE_WRITES} = "$notes/notes";
local $ENV{PERL5LIB}              = join ':', $build, "$FindBin::RealBin/lib",
    grep {length} $ENV{PERL5LIB} // '';
local $ENV{PERENNIAL_PAGE_WRITES_AT_FORK} = 1                         if $opt{'from-fork'};
local $ENV{PERENNIAL_PAGE_WRITES_AGAIN}   = 1                         if $opt{again};
local $ENV{LD_PRELOAD}                    = "$build/no-segv-block.so" if $opt{'from-fork'};

my $srv = start_server(
    'perennial-scripts',
    workers => 1,
    preload => 'CGI Perennial::Bench::PageWrites',
    scripts => abs_path("$FindBin::RealBin/../examples/cgi-bin"),
    probe   => '/registry/hello.pl',    # Whose worker goes: any answer with "Hello" in it
    user    => $opt{user},

    # The module reads them as the manager loads it: site code sees only what is passed
    set => [map {"PerlPassEnv $_"} grep {/^PERENNIAL_PAGE_WRITES/} keys %ENV]
);
my $worker = _fresh_worker($srv);
my $before = Perennial::SizeLimit::memory($worker);
my $next   = POSIX::SIGRTMIN() + 5;
kill $next, $worker;    # Arms it (from its fork: ends the phase of its start)
_get($srv->{port}, '/no-such-page', 404);
_next_phase($worker, $next);
_get($srv->{port}, "/registry/$scripts[0]", 200);
_next_phase($worker, $next);
_get($srv->{port}, "/registry/$_", 200) for @scripts[1 .. $#scripts];
_next_phase($worker, $next);
_get($srv->{port}, '/registry/' . $scripts[$_ % @scripts], 200) for 1 .. $opt{requests};
_idle($worker);
my $after = Perennial::SizeLimit::memory($worker);
kill POSIX::SIGRTMIN() + 6, $worker;
_wait_for("$notes/notes");
stop_server($srv);
_report("$notes/notes", $before, $after);

# The XS, built for this run into a directory of its own that the server's user can read
sub _build () {
    my $dir = tempdir(CLEANUP => 1);
    my $so  = "$dir/auto/Perennial/Bench/PageWrites/PageWrites.so";
    system($^X, "$FindBin::RealBin/../script/build-xs", "$FindBin::RealBin/xs/PageWrites.xs", $so)
        == 0
        or die "Can't build bench/xs/PageWrites.xs\n";
    my @cc = (split(' ', $Config{cc}), '-shared', '-fPIC', '-O2', '-Wall');
    system(@cc, '-o', "$dir/no-segv-block.so", "$FindBin::RealBin/xs/no-segv-block.c", '-ldl') == 0
        or die "Can't build bench/xs/no-segv-block.c\n";
    system('chmod', '-R', 'a+rX', $dir) == 0 or die "Can't open $dir to the server\n";
    return $dir;
}

# The worker that answered the probe goes (QUIT, gracefully); the manager starts another
sub _fresh_worker ($srv) {
    my ($probed) = _workers($srv) or die "No worker found\n";
    kill 'QUIT', $probed;
    for (1 .. 100) {
        Time::HiRes::sleep(0.1);
        my @fresh = grep { $_ != $probed } _workers($srv);
        if (@fresh) {
            sleep 1;    # Waiting for requests
            return $fresh[0];
        }
    }
    die "No new worker came after the first one was stopped\n";
}

# The manager's worker processes (its children named so)
sub _workers ($srv) {
    return grep { _parent($_) == $srv->{pid} && _name($_) eq 'perennial worker' } _pids();
}

sub _pids () {
    opendir(my $dh, '/proc') or die "Can't read /proc: $!\n";
    return grep {/\A\d+\z/} readdir $dh;
}

sub _parent ($pid) { (_stat($pid))[1] // -1 }

# The fields of /proc/PID/stat after "pid (comm) ": state, parent, ...
sub _stat ($pid) {
    open(my $fh, '<', "/proc/$pid/stat") or return;
    my $line = <$fh> // return;
    return split / /, substr($line, rindex($line, ')') + 2);
}

# The next phase once the worker is done with the last request (its log line, its clean-up):
# asleep in its wait at two looks in a row
sub _next_phase ($worker, $signal) {
    _idle($worker);
    kill $signal, $worker;
    return;
}

sub _idle ($worker) {
    my $asleep = 0;
    for (1 .. 200) {
        Time::HiRes::sleep(0.02);
        $asleep = ((_stat($worker))[0] // '') eq 'S' ? $asleep + 1 : 0;
        return if $asleep == 2;
    }
    die "Worker $worker did not come back to its wait\n";
}

sub _name ($pid) {
    open(my $fh, '<', "/proc/$pid/cmdline") or return '';
    my $cmd = join ' ', split /\0/, (<$fh> // '');
    return $cmd;
}

# One request on a connection of its own, read to its end; dies unless it has the status
# expected (a read that a protected page made fail would otherwise only lower the counts)
sub _get ($port, $path, $status) {
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port)
        or die "Can't connect to port $port: $@\n";
    $sock->syswrite("GET $path HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    my ($response, $part) = ('', '');
    $response .= $part while $sock->sysread($part, 65536);
    my ($got) = $response =~ m{\AHTTP/1\.\d (\d{3}) };
    die "GET $path: " . ($got // 'no answer') . ", not $status\n" unless ($got // 0) == $status;
    return;
}

sub _wait_for ($file) {
    for (1 .. 50) {
        return if -s $file;
        Time::HiRes::sleep(0.1);
    }
    die "The worker wrote no notes to $file\n";
}

sub _report ($file, $before, $after) {
    open(my $fh, '<', $file) or die "Can't read $file: $!\n";
    my ($protected) = (<$fh> // '') =~ /protected (\d+)/;
    my (%pages, %by, %first, %again);
    while (my $line = <$fh>) {
        my ($addr, $phase, $where, $lineno, $op) = $line =~ /\A(\S+) (\d+) (.+) (\d+) (\S+)\n?\z/
            or next;
        my $page = do {
            no warnings 'portable';    ## no critic (ProhibitNoWarnings) a 64-bit address
            hex($addr) >> 12;
        };
        $where =~ s{\A.*/(?:lib|perl5|perl-base|perl/[\d.]+)/}{};
        if (defined $first{$page}) {
            $again{$first{$page}}{$phase}{$page} = 1;
            $by{again}{$phase}{$where}++;
            $by{again_line}{$phase}{"$where:$lineno"}++;
            next;
        }
        $first{$page} = $phase;
        $pages{$phase}++;
        $by{file}{$phase}{$where}++;
        $by{line}{$phase}{"$where:$lineno"}++;
        $by{op}{$phase}{$op}++;
    }
    printf "worker private memory: %d KB when it started waiting, %d KB after (the watch's own "
        . "notes and buffer included); %d shared heap pages (%d KB) watched\n\n",
        $before->{private}, $after->{private}, $protected // 0, ($protected // 0) * 4;
    for my $phase (0 .. $#PHASES) {
        my $n = $pages{$phase} // 0;
        printf "%s: %d pages (%d KB) copied\n", $PHASES[$phase], $n, $n * 4;
        next unless $n;
        for my $kind (qw(file line op)) {
            my $count = $by{$kind}{$phase};
            printf "  by %-4s (%d): %s\n", $kind, scalar keys %$count, _top($count);
        }
        print "\n";
    }
    _report_again(\%first, \%again, $by{again}, $by{again_line}) if $opt{again};
}

# --again: how many of each phase's pages a later phase wrote to again (a page written only in
# its phase would stay shared with a process that had gone through that phase before the fork)
sub _report_again ($first, $again, $by_file, $by_line) {
    my %copied;
    $copied{$_}++ for values %$first;
    for my $phase (0 .. $#PHASES - 1) {
        my $written = $again->{$phase} // {};
        my %any     = map {%$_} values %$written;
        printf "%s's %d pages: %d written again later (%s)\n", $PHASES[$phase],
            $copied{$phase} // 0, scalar keys %any,
            join(', ',
            map { "$PHASES[$_] " . keys %{$written->{$_} // {}} } $phase + 1 .. $#PHASES);
    }
    for my $phase (1 .. $#PHASES) {
        my $count = $by_file->{$phase} // next;
        printf "%s, pages an earlier phase copied, written again, by file: %s\n", $PHASES[$phase],
            _top($count);
        printf "  by line: %s\n", _top($by_line->{$phase});
    }
    return;
}

# The counts of %$count, the largest first, --top of them: "name count, ..."
sub _top ($count) {
    my @top = sort { $count->{$b} <=> $count->{$a} || $a cmp $b } keys %$count;
    splice @top, $opt{top} if @top > $opt{top};
    return join ', ', map {"$_ $count->{$_}"} @top;
}
