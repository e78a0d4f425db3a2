use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(start_server wait_until);

# Apache's idle-server maintenance, watched through the scoreboard
my $srv = start_server(app => 'pid.psgi', conf => <<'CONF');
StartServers 1
MinSpareServers 2
MaxSpareServers 3
MaxClients 6
KeepAlive On
KeepAliveTimeout 30
ParkKeepAlive Off
CONF

subtest 'below MinSpareServers the manager forks until two are idle' => sub {
    ok wait_until(sub { $srv->idle >= 2 }, 10, 'two idle'), 'two idle workers';
    like $srv->error_log, qr/manager \d+ started/, 'manager start is logged';
};

subtest 'busy workers are replaced by new idle ones, up to MaxClients' => sub {

    # Keep-alive connections hold their workers, as under Apache prefork (ParkKeepAlive Off):
    # each one is busy (K) while open
    my @held;
    for my $n (1 .. 4) {
        my $sock = $srv->connect;
        $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        sysread $sock, my $buf, 4096;
        push @held, $sock;
        ok wait_until(sub { $srv->idle >= 2 || $srv->workers >= 6 }, 10, "spares with $n held"),
            "$n held: " . $srv->scoreboard;
    }
    cmp_ok $srv->workers, '<=', 6, 'never more than MaxClients';
    ok wait_until(sub { $srv->scoreboard =~ tr/K// == 4 }, 5, 'four K'),
        'four workers hold keep-alive connections: ' . $srv->scoreboard;

    # Released, the pool is above MaxSpareServers and shrinks one a second
    close $_ for @held;
    ok wait_until(
        sub { $srv->scoreboard !~ /K/ && $srv->idle <= 3 && $srv->error_log =~ /stopping worker/ },
        15,
        'back to MaxSpareServers'
        ),
        'idle workers retired: ' . $srv->scoreboard;
    like $srv->error_log, qr/stopping worker \d+ gracefully/,               'retirement is logged';
    like $srv->error_log, qr/worker \d+ exited \(status 0, \d+ requests\)/, 'exit is logged';
    cmp_ok $srv->idle, '>=', 2, 'still at least MinSpareServers idle';
};

$srv->stop;
like $srv->error_log, qr/manager \d+ stopped/, 'stop is logged';
done_testing;
