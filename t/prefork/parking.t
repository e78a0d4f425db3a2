use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Time::HiRes     ();
use Perennial::Test qw(start_server wait_until);

# Idle kept-alive connections wait in the parking process, not in a worker: the clients below
# each keep their own connection and read their own responses byte by byte, so a connection
# the server dropped or a request it lost shows as a missing answer (nothing retries).

# One request on a kept-alive connection: the answering worker's pid, or undef when no whole
# response came within $seconds
sub ask ($sock, $path = '/', $seconds = 10) {
    $sock->syswrite("GET $path HTTP/1.1\r\nHost: x\r\n\r\n") or return;
    return answer($sock, $seconds);
}

# The next response's body, or undef when none came whole within $seconds
sub answer ($sock, $seconds = 10) {
    my ($out, $deadline) = ('', Time::HiRes::time() + $seconds);
    while (Time::HiRes::time() < $deadline) {
        if ($out =~ /\r\n\r\n/ && $out =~ /Content-Length: (\d+)\r\n/i) {
            my $want = $1;
            my ($head, $body) = split /\r\n\r\n/, $out, 2;
            return $body if length $body >= $want;
        }
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        select(my $rout = $rin, undef, undef, 0.2) or next;
        sysread($sock, $out, 65_536, length $out)  or return;
    }
    return;
}

sub client ($srv) {
    return IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port, Timeout => 5)
        // die "Can't connect: $@";
}

sub parked ($srv) { $srv->{board}->parked }

# A client answered once, whose connection is then parked
sub parked_client ($srv) {
    my $sock = client($srv);
    ok defined ask($sock),                                 'answered';
    ok wait_until(sub { parked($srv) == 1 }, 5, 'parked'), 'and parked';
    return $sock;
}

my $POOL = <<'CONF';
StartServers 1
MinSpareServers 1
MaxSpareServers 1
MaxClients 1
KeepAliveTimeout 30
<Location /server-status>
    SetHandler server-status
</Location>
CONF

subtest 'one worker serves five kept-alive clients in turn: idle ones do not hold it' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => $POOL);
    my @clients = map { client($srv) } 1 .. 5;
    my @first   = map { ask($_) } @clients;
    is scalar(grep {defined} @first), 5, 'each answered its first request';
    ok wait_until(sub { parked($srv) == 5 }, 5, 'five parked'),
        'the five connections are parked, the worker free';
    my @second = map { ask($_) } reverse @clients;
    is scalar(grep {defined} @second), 5, 'and each its second, on the same connection';
    ok wait_until(sub { parked($srv) == 5 }, 5, 'parked'), 'parked again after it';
    my $status = client($srv);
    like ask($status, '/server-status?auto'), qr/^ParkedConnections: 5$/m,
        'server-status?auto counts them';
    like ask($status, '/server-status'), qr/5 idle connections parked/, 'and so does its page';
    like $srv->error_log, qr/parking process \d+ started/, 'the log names the parking process';
    $srv->stop;
};

# The worker's accept loop (in C) waits on the listeners and the parking process's handle at
# once: a parked connection whose next request came is taken in its turn, from the handle the
# wait named. (It was left behind every new connection: the wait named the parking process,
# the loop left the connection to the Perl, whose own wait named the listener.)
subtest 'a parked connection coming back takes its turn among new connections' => sub {
    my $srv  = start_server(app => 'pid.psgi', conf => $POOL);
    my $kept = parked_client($srv);
    my $busy = client($srv);
    $busy->syswrite("GET /sleep/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ok wait_until(sub { $srv->scoreboard eq 'W' }, 5, 'busy'), 'the worker is busy';
    my @new = map { client($srv) } 1 .. 10;
    $new[$_]->syswrite("GET /new/$_ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        for 0 .. $#new;
    ok defined ask($kept, '/kept'), 'the kept connection is answered';

    for my $sock ($busy, @new) {    # Each to its end
        local $/;
        readline $sock;
    }

    # The order they were served in: the access log's
    ok wait_until(sub { (() = $srv->access_log =~ m{"GET /(?:new/\d+|kept) }g) == 11 },
        10, 'logged'),
        'all logged';
    my @order = $srv->access_log =~ m{"GET /(sleep/2|new/\d+|kept) HTTP}g;
    is $order[0], 'sleep/2', 'the busy request first';
    my ($at) = grep { $order[$_] eq 'kept' } 0 .. $#order;
    ok defined $at && $at <= 2,
        "then the kept connection, after at most one new one (@order[1 .. 4])";
    $srv->stop;
};

subtest 'ParkKeepAlive Off: the worker holds its connection, as Apache prefork' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => "$POOL\nParkKeepAlive Off\n");
    my @clients = map { client($srv) } 1 .. 2;
    ok defined ask($clients[0]),          'the first client is answered';
    ok !defined ask($clients[1], '/', 2), 'the second waits: the worker holds the first';
    is parked($srv), 0, 'nothing parked';
    unlike $srv->error_log, qr/parking process/, 'no parking process';
    $srv->stop;
};

subtest 'a parked connection comes back to a worker of a new generation, nothing lost' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => $POOL);
    my @clients = map { client($srv) } 1 .. 50;
    my @first   = map { ask($_) } @clients;
    is scalar(grep {defined} @first), 50, 'fifty answered';
    ok wait_until(sub { parked($srv) == 50 }, 5, 'parked'), 'fifty parked';
    $srv->signal('USR1');
    ok wait_until(sub { !kill 0, $first[0] }, 10, 'old worker gone'),
        'the worker that served them is gone (graceful restart)';
    my @second = map { ask($_) } @clients;
    is scalar(grep {defined} @second), 50,        'every client is answered on its connection';
    isnt $second[0],                   $first[0], 'by another worker';
    $srv->stop;
};

subtest 'a hot upgrade: the new manager takes the parked connections over' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => $POOL);
    my $old     = $srv->pid;
    my @clients = map { client($srv) } 1 .. 50;
    my @first   = map { ask($_) } @clients;
    is scalar(grep {defined} @first), 50, 'fifty answered';
    ok wait_until(sub { parked($srv) == 50 }, 5, 'parked'), 'fifty parked';
    my ($out, $code) = $srv->cli('upgrade', '-c', $srv->conf);
    is $code, 0, 'perennial upgrade finished' or diag $out;
    my ($new) = $out =~ /by manager (\d+)/;
    my @second = map { ask($_) } @clients;
    is scalar(grep {defined} @second), 50,        'every client is answered on its own connection';
    isnt $second[0],                   $first[0], 'by a worker of the new manager';
    like $srv->error_log, qr/parking process \d+ stopped: 50 connection\(s\) held, 50 put back/,
        'the old parking process handed them on';
    kill 'TERM', $new;
    wait_until(sub { !kill 0, $new }, 10, 'new manager gone');
};

subtest 'logs reopened: a new parking process takes the connections over' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => $POOL);
    my @clients = map { client($srv) } 1 .. 10;
    is scalar(grep {defined} map { ask($_) } @clients), 10, 'ten answered';
    ok wait_until(sub { parked($srv) == 10 }, 5, 'parked'), 'and parked';
    my ($first) = $srv->error_log =~ /parking process (\d+) started/;
    my ($out, $code) = $srv->cli('reopen-logs', '-c', $srv->conf);
    is $code, 0, 'reopen-logs sent' or diag $out;
    ok wait_until(sub { $srv->error_log =~ /parking process $first exited \(status 0\), replaced/ },
        5, 'replaced'),
        'the old parking process hands over and goes';
    like $srv->error_log, qr/parking process $first stopped: 10 connection\(s\) held, 10 put back/,
        'all ten put back';
    ok wait_until(sub { parked($srv) == 10 }, 5, 'counted'),
        'the status page counts them, held by the new one';
    is scalar(grep {defined} map { ask($_) } @clients), 10, 'every client is answered again';
    $srv->stop;
};

subtest 'MaxKeepAliveRequests counts across parking' => sub {
    my $srv  = start_server(app => 'pid.psgi', conf => "$POOL\nMaxKeepAliveRequests 3\n");
    my $sock = client($srv);
    my @pids;
    for (1 .. 2) {
        push @pids, ask($sock);
        ok wait_until(sub { parked($srv) == 1 }, 5, 'parked'), "parked after request $_";
    }
    push @pids, ask($sock);
    is scalar(grep {defined} @pids), 3, 'three answered';
    ok !defined ask($sock, '/', 2), 'the connection is closed after the third';
    $srv->stop;
};

subtest 'the parking process dies: its connections close, and the server goes on parking' => sub {
    my $srv   = start_server(app => 'pid.psgi', conf => $POOL);
    my $sock  = parked_client($srv);
    my ($lot) = $srv->error_log =~ /parking process (\d+) started/;
    ok kill('KILL', $lot), 'the parking process is killed';
    ok wait_until(sub { parked($srv) == 0 }, 5, 'count'),
        'the status pages no longer count its connections';
    ok !defined ask($sock, '/', 3), 'its connection is gone with it';
    ok wait_until(sub { $srv->error_log =~ /parking process (?!$lot)\d+ started/ }, 5, 'again'),
        'the manager starts another';
    like $srv->error_log, qr/parking process $lot exited \(signal 9, KILL\)/, 'and logs the death';
    my $again = parked_client($srv);    # By the new one
    ok defined ask($again), 'and answered again';
    $srv->stop;
};

subtest 'a parking process that does not stop is pressed: TERM, then KILL' => sub {
    my $srv = start_server(app => 'pid.psgi', conf => $POOL);
    my ($lot) = $srv->error_log =~ /parking process (\d+) started/;
    ok kill('STOP', $lot), 'the parking process is stopped (it can take no signal but KILL)';
    kill 'TERM', $srv->pid;
    ok wait_until(sub { !$srv->alive }, 30, 'server stopped'), 'the server still stops';
    my $log = $srv->error_log;
    like $log,
        qr/parking process $lot did not stop: TERM.*parking process $lot did not stop: KILL/s,
        'after ten seconds TERM, ten more KILL, and the log says so';
    like $log, qr/parking process $lot exited \(signal 9, KILL\).*manager \d+ stopped/s,
        'reaped before the manager says it stopped';
    kill 'KILL', $lot;    # Whatever happens, none is left behind
};

subtest 'a worker killed while it holds a connection loses that one only' => sub {
    my $srv    = start_server(app => 'pid.psgi', conf => $POOL);
    my $parked = parked_client($srv);

    # The next generation holds a connection 30 s before parking it
    open(my $fh, '>>', $srv->conf) or die $!;
    print {$fh} "ParkKeepAliveAfter 30\n";
    close $fh;
    my ($old) = map { $_->{pid} } $srv->slots;
    $srv->signal('USR1');
    ok wait_until(sub { !kill 0, $old }, 10, 'restarted'), 'a new generation';
    my $held = client($srv);
    my $pid  = ask($held);
    ok defined $pid,                                        'a second client is answered';
    ok wait_until(sub { $srv->scoreboard eq 'K' }, 5, 'K'), 'its worker waits for its next request';
    ok kill('KILL', $pid),                                  'and is killed';
    ok !defined ask($held, '/', 3),                         'the connection it held is lost';
    my $again = ask($parked);
    ok defined $again, 'the parked one is answered by the new worker';
    isnt $again, $pid, 'which is another process';
    $srv->stop;
};

subtest 'a client that closes its parked connection costs no worker' => sub {
    my $srv     = start_server(app => 'pid.psgi', conf => $POOL);
    my @clients = map { client($srv) } 1 .. 3;
    ask($_) for @clients;
    ok wait_until(sub { parked($srv) == 3 }, 5, 'parked'), 'three parked';
    close $_ for @clients;
    ok wait_until(sub { parked($srv) == 0 }, 5, 'gone'), 'the parking process closes them';
    my $count = () = $srv->access_log =~ /\n/g;
    is $count, 3, 'no request was made of them';
    $srv->stop;
};

subtest 'a head given back whole, with the next one begun: the next is parked in its turn' => sub {
    my $srv  = start_server(app => 'pid.psgi', conf => $POOL);
    my $sock = client($srv);
    $sock->syswrite("GET / HTTP/1.1\r\n");
    ok wait_until(sub { parked($srv) == 1 }, 5, 'parked'),
        'the first part waits in the parking process';
    $sock->syswrite("Host: x\r\n\r\nGET / HTTP/1.1\r\n");
    ok defined answer($sock), 'the first request is answered';
    ok wait_until(sub { parked($srv) == 1 && $srv->scoreboard eq '_' }, 5, 'parked again'),
        'the second, begun, waits in the parking process, not in the worker';
    $sock->syswrite("Host: x\r\n\r\n");
    ok defined answer($sock), 'and is answered once whole';
    $srv->stop;
};

subtest 'a graceful stop closes the parked connections, as Apache closes idle ones' => sub {
    my $srv = start_server(
        app  => 'pid.psgi',
        conf => $POOL =~ s/(StartServers|MinSpareServers|MaxSpareServers|MaxClients) 1/$1 2/gr
    );
    my $idle = parked_client($srv);
    my $busy = client($srv);
    $busy->syswrite("GET /sleep/3 HTTP/1.1\r\nHost: x\r\n\r\n");
    ok wait_until(sub { $srv->scoreboard =~ /W|R/ }, 5, 'busy'), 'a worker is busy';
    $srv->signal('WINCH');
    my $rin = '';
    vec($rin, fileno $idle, 1) = 1;
    ok select(my $r = $rin, undef, undef, 2.5), 'the parked connection ends';
    is sysread($idle, my $buf, 10), 0, 'closed, with nothing sent';
    ok defined answer($busy), 'and the busy request is answered all the same';
    like $srv->error_log, qr/parking process \d+ stopped: 1 connection\(s\) held, closed/,
        'the log says so';
    close $busy;    # (its worker would wait KeepAliveTimeout for a last request)
    $srv->wait_exit;
};

done_testing;
