#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use File::Temp qw(tempdir);
use IO::Socket::IP;
use POSIX                     ();
use Time::HiRes               ();
use Perennial::Bench::Load    qw(run_load);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Servers qw(spawn);

# Requests/s through HAProxy (examples/haproxy/haproxy.cfg, as shipped but for its addresses)
# in front of 1, 2 and 3 Perennial instances, each on its own loopback address with the same
# workers. On one machine the instances share its cores: the figures show what the balancer
# costs and that it spreads the load, not what three machines would do. Every load is bounded
# by wrk's -d.

my %opt = (workers => 2, connections => 32, duration => 5, rounds => 3);
options(\%opt,
    'Usage: perl bench/multihost.pl [--workers 2] [--connections 32] [--duration 5] [--rounds 3]',
    'workers=i', 'connections=i', 'duration=i', 'rounds=i');
my $root = "$FindBin::RealBin/..";
my $dir  = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my @running;
END { kill 'TERM', @running if @running; waitpid $_, 0 for @running }

my (@instances, %result);
for my $n (1 .. 3) {
    my $host = '127.0.0.' . ($n + 1);
    my $port = _free_port($host);
    _write("$dir/p$n.conf",
              "Listen $host:$port\nPidFile $dir/p$n.pid\nLogLevel warn\n"
            . "ErrorLog $dir/error$n.log\nMaxRequestsPerChild 0\n<Location />\n    SetHandler psgi\n"
            . "    PSGIApp $FindBin::RealBin/apps/hello.psgi\n</Location>\n"
            . "<Location /health>\n    SetHandler server-health\n</Location>\n");
    push @running,
        spawn(
        "$dir/out$n.log", $^X,  "-I$root/lib",   "$root/bin/perennial",
        'serve',          '-c', "$dir/p$n.conf", '--workers',
        $opt{workers}
        );
    push @instances, [$host, $port];
}
Time::HiRes::sleep(2);    # The instances started
for my $count (1 .. 3) {
    my $hport = _free_port('127.0.0.1');
    my $cfg   = do { local (@ARGV, $/) = ("$root/examples/haproxy/haproxy.cfg"); <> };
    $cfg =~ s/bind 127\.0\.0\.1:80\b/bind 127.0.0.1:$hport/ or die "no bind line\n";
    for my $n (1 .. 3) {
        my ($host, $port) = @{$instances[$n - 1]};
        my $line = $n <= $count ? "server p$n $host:$port check" : '';
        $cfg =~ s/server p$n \Q$host\E:8080 check/$line/ or die "no server line for p$n\n";
    }
    _write("$dir/haproxy$count.cfg", $cfg);
    my $haproxy = spawn("$dir/haproxy$count.log", '/usr/sbin/haproxy', '-db', '-f',
        "$dir/haproxy$count.cfg");
    Time::HiRes::sleep(2);    # The instances seen up (rise 2, every 500 ms)
    my $url = "http://127.0.0.1:$hport/";
    run_load(tool => 'wrk', url => $url, concurrency => $opt{connections}, seconds => 2);
    my @runs = map {
        my $r = run_load(
            tool        => 'wrk',
            url         => $url,
            concurrency => $opt{connections},
            seconds     => $opt{duration}
        );
        printf STDERR "%d instance(s), round %d: %9.0f req/s\n", $count, $_, $r->{rps};
        $r;
    } 1 .. $opt{rounds};
    @runs = sort { $a->{rps} <=> $b->{rps} } @runs;
    $result{$count} = $runs[$#runs / 2];
    kill 'TERM', $haproxy;
    waitpid $haproxy, 0;
    @running = grep { $_ != $haproxy } @running;
}

say '';
say "hello.psgi through HAProxy, $opt{workers} workers per instance, wrk -c$opt{connections}"
    . " -d$opt{duration}s (keep-alive), the median of $opt{rounds} rounds, one machine";
say sprintf '%-10s %10s %10s %8s %10s', 'instances', 'req/s', 'p99 ms', 'errors', 'vs one';
for my $count (1 .. 3) {
    my $r = $result{$count};
    say sprintf '%-10d %10.0f %10.2f %8d %9.2fx', $count, $r->{rps}, $r->{p99_ms} // 0,
        $r->{failed} // 0, $r->{rps} / ($result{1}{rps} || 1);
}

sub _write ($file, $text) {
    open(my $fh, '>', $file) or die "Can't write $file: $!\n";
    print {$fh} $text;
    close $fh;
}

sub _free_port ($host) {
    my $sock = IO::Socket::IP->new(LocalHost => $host, LocalPort => 0, Listen => 1)
        or die "Can't listen on $host: $@\n";
    return $sock->sockport;
}
