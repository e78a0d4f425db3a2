use v5.36;
use lib 't/lib';
use Test::More;
use Cwd        qw(getcwd);
use File::Temp qw(tempdir);
use IO::Socket::IP;
use POSIX           ();
use Perennial::Test qw(http_request load_start load_stop slurp wait_until write_file);

# Past one host: three Perennial instances (on 127.0.0.2, .3 and .4) behind HAProxy with the
# configuration shipped in examples/haproxy/haproxy.cfg, health-checked on server-health. A
# rolling upgrade, one instance at a time (graceful-stop, which drains first, then the new
# version started), under continuous load through HAProxy: no request fails, and the new
# version answers at the end.

my ($haproxy) = grep {-x} map {"$_/haproxy"} (split(/:/, $ENV{PATH}), '/usr/sbin');
plan skip_all => 'haproxy is not installed' unless $haproxy;
my $root = getcwd();
my $dir  = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my (%pid, @running);

END {    # Whatever happened, nothing left running
    kill 'KILL', @running if @running;
}

sub free_port ($host) {
    my $sock = IO::Socket::IP->new(LocalHost => $host, LocalPort => 0, Listen => 1)
        or die "Can't listen on $host: $@";
    return $sock->sockport;
}

# Instance $n (1-3) on 127.0.0.($n+1), serving version_$v.psgi
my %port = map { $_ => free_port('127.0.0.' . ($_ + 1)) } 1 .. 3;

sub start_instance ($n, $version) {
    my $host = '127.0.0.' . ($n + 1);
    write_file("$dir/p$n.conf", <<"CONF");
Listen $host:$port{$n}
PidFile $dir/p$n.pid
ErrorLog $dir/error$n.log
LogLevel info
GracefulStopDrain 3
<Location />
    SetHandler psgi
    PSGIApp $root/t/psgi/version_$version.psgi
</Location>
<Location /health>
    SetHandler server-health
</Location>
CONF
    my $pid = fork // die "Can't fork: $!";
    if (!$pid) {
        setpgrp(0, 0);
        open(STDOUT, '>>', "$dir/out$n.log") or die;
        open(STDERR, '>&', \*STDOUT)         or die;
        exec $^X, "-I$root/lib", "$root/bin/perennial", 'serve', '-c', "$dir/p$n.conf",
            '--workers', 2
            or POSIX::_exit(127);
    }
    push @running, $pid;
    $pid{$n} = $pid;
    return wait_until(
        sub {
            my $res = eval { http_request($port{$n}, 'GET', 'x', '/health', to => $host) };
            $res && $res->{status} eq '200';
        },
        15,
        "instance $n ready"
    );
}

ok start_instance($_, 'a'), "instance $_ serves version A" for 1 .. 3;

# HAProxy with the shipped configuration, its addresses and ports changed
my $hport = free_port('127.0.0.1');
my $cfg   = slurp("$root/examples/haproxy/haproxy.cfg");
$cfg =~ s/bind 127\.0\.0\.1:80\b/bind 127.0.0.1:$hport/ or BAIL_OUT('no bind line');
for my $n (1 .. 3) {
    my $host = '127.0.0.' . ($n + 1);
    $cfg =~ s/server p$n \Q$host\E:8080 check/server p$n $host:$port{$n} check/
        or BAIL_OUT("no server line for p$n");
}
write_file("$dir/haproxy.cfg", $cfg);
my $hpid = fork // die;
if (!$hpid) {
    setpgrp(0, 0);
    open(STDOUT, '>',  "$dir/haproxy.log") or die;
    open(STDERR, '>&', \*STDOUT)           or die;
    exec $haproxy, '-db', '-f', "$dir/haproxy.cfg" or POSIX::_exit(127);
}
push @running, $hpid;
ok wait_until(
    sub {
        my $res = eval { http_request($hport, 'GET', 'x', '/') };
        $res && $res->{body} =~ /\AA /;
    },
    15,
    'HAProxy up'
    ),
    'HAProxy balances the three instances';
sleep 2;    # Every instance seen up (rise 2, every 500 ms)

my $load = load_start($hport, clients => 4, seconds => 60);
sleep 1;
for my $n (1 .. 3) {
    kill 'QUIT', $pid{$n};    # perennial graceful-stop
    if ($n == 1) {            # The manager sees the signal in its loop: a moment later
        my $said = '';
        wait_until(
            sub {
                my $res
                    = eval { http_request($port{$n}, 'GET', 'x', '/health', to => '127.0.0.2') };
                $said = $res ? "$res->{status} $res->{body}" : 'no answer';
                $said eq "503 draining\n";
            },
            3,
            'draining'
        );
        is $said, "503 draining\n",
            'a graceful stop first drains: the health page says so, the instance still serves';
    }
    waitpid $pid{$n}, 0;
    @running = grep { $_ != $pid{$n} } @running;
    ok start_instance($n, 'b'), "instance $n: stopped gracefully, version B started";
    sleep 2;    # Seen up again before the next one goes
}
my $sum = load_stop($load);
cmp_ok $sum->{ok}, '>', 100, "requests served through HAProxy during the upgrade: $sum->{ok}";
is $sum->{failed}, 0, 'none failed' or diag explain $sum->{why};
my %seen = map { ((http_request($hport, 'GET', 'x', '/')->{body} =~ /\A(\w) /)[0] => 1) } 1 .. 6;
is_deeply [sort keys %seen], ['B'], 'every instance answers with version B';
like slurp("$dir/error1.log"), qr/draining for 3 s before the listeners close/,
    'the instance says it drained';

kill 'TERM', @running;
waitpid $_, 0 for @running;
@running = ();
done_testing;
