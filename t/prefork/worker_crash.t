use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(load_start load_stop start_server wait_until);

# A worker that is killed or dies is replaced, and the event is logged with the reason; a
# crash in the middle of a request loses that request only, and the log names it
subtest 'an idle worker killed is logged and replaced' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 2);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    my ($victim) = map { $_->{pid} } $srv->slots;
    kill 'KILL', $victim;
    ok wait_until(
        sub { $srv->error_log =~ /worker $victim exited \(signal 9, KILL, \d+ requests\)/ },
        10, 'logged'),
        'the kill is logged with the signal';
    ok $srv->wait_replaced([$victim], 2), 'a new worker took its place: ' . $srv->scoreboard;
    is $srv->get('/')->{status}, 200, 'serving';
    $srv->stop;
};

subtest 'crashes in the middle of a request: KILL, a segfault, _exit' => sub {
    my $srv = start_server(app => 'crash.psgi', workers => 2);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    for my $case (['/segv', qr/signal 11, SEGV/], ['/exit', qr/status 3/]) {
        my ($path, $how) = @$case;
        my $res = $srv->get($path);
        isnt $res->{status}, 200, "$path: the client sees the request fail ($res->{status})";
        ok wait_until(
            sub {
                $srv->error_log
                    =~ /died \($how\) serving 'GET \Q$path\E HTTP\/1\.1' for 127\.0\.0\.1: that request is lost/;
            },
            10,
            "$path logged"
            ),
            "$path: logged with the signal or status and the request line";
    }
    ok wait_until(sub { $srv->idle == 2 }, 10, 'refilled'), 'both slots refilled';
    is $srv->get('/')->{status}, 200, 'serving';
    $srv->stop;

    $srv = start_server(app => 'pid.psgi', workers => 1);
    my $client = $srv->connect;
    print {$client} "GET /sleep/30 HTTP/1.1\r\nHost: x\r\n\r\n";
    ok wait_until(sub { $srv->scoreboard eq 'W' }, 10, 'busy'), 'the worker is busy';
    my ($pid) = map { $_->{pid} } $srv->slots;
    kill 'KILL', $pid;
    ok wait_until(
        sub {
            $srv->error_log
                =~ /worker $pid died \(signal 9, KILL\) serving 'GET \/sleep\/30 HTTP\/1\.1'/;
        },
        10,
        'KILL logged'
        ),
        'KILL in the middle of a request: logged with the request line';
    is $srv->get('/')->{status}, 200, 'the slot is refilled and serving';
    $srv->stop;
};

# A fast stop ends the requests in progress, as Apache's does: the log says so, at warn, and
# does not call it a crash (the response may also have gone whole just before the stop came)
subtest 'a stop in the middle of a request is logged as a stop, not a crash' => sub {
    my $srv    = start_server(app => 'pid.psgi', workers => 1);
    my $client = $srv->connect;
    print {$client} "GET /sleep/30 HTTP/1.1\r\nHost: x\r\n\r\n";
    ok wait_until(sub { $srv->scoreboard eq 'W' }, 10, 'busy'), 'the worker is busy';
    my ($pid) = map { $_->{pid} } $srv->slots;
    $srv->stop;
    like $srv->error_log,
        qr/\[warn\] worker $pid ended by a stop or restart \(signal 15, TERM\) serving 'GET \/sleep\/30 HTTP\/1\.1' for 127\.0\.0\.1: its response may have been cut short/,
        'the request the stop ended is logged at warn';
    unlike $srv->error_log, qr/\[error\]/, 'and nothing as an error';

    # Killed by something else during a graceful stop (which sends no TERM): a crash still
    $srv    = start_server(app => 'pid.psgi', workers => 1);
    $client = $srv->connect;
    print {$client} "GET /sleep/30 HTTP/1.1\r\nHost: x\r\n\r\n";
    ok wait_until(sub { $srv->scoreboard eq 'W' }, 10, 'busy'), 'busy again';
    ($pid) = map { $_->{pid} } $srv->slots;
    $srv->signal('WINCH');
    ok wait_until(sub { $srv->error_log =~ /graceful stop requested/ }, 10, 'graceful'),
        'a graceful stop begins';
    kill 'KILL', $pid;
    ok wait_until(
        sub {
            $srv->error_log
                =~ /\[error\] worker $pid died \(signal 9, KILL\) serving 'GET \/sleep\/30 HTTP\/1\.1'/;
        },
        10,
        'logged'
        ),
        'a worker killed from outside during a graceful stop is logged as a crash';
    $srv->wait_exit;
};

subtest 'workers killed under load: only the requests in flight are lost, the pool recovers' =>
    sub {
    my $srv = start_server(app => 'pid.psgi', workers => 4);
    ok wait_until(sub { $srv->idle == 4 }, 10, 'four idle'), 'four workers';
    my $load  = load_start($srv->port, clients => 4, path => '/sleep/0.002', seconds => 30);
    my $kills = 0;
    for (1 .. 6) {
        select undef, undef, undef, 0.4;
        my @pids = grep {$_} map { $_->{pid} } $srv->slots;
        $kills += kill 'KILL', grep {defined} @pids[0 .. 1];
    }
    select undef, undef, undef, 0.5;
    my $sum = load_stop($load);
    cmp_ok $sum->{ok}, '>', 20, "requests were served under load ($sum->{ok})";
    cmp_ok $sum->{failed}, '<=', $kills,
        "at most one request lost per worker killed ($sum->{failed} lost, $kills killed)";
    ok wait_until(sub { $srv->idle == 4 }, 10, 'recovered'), 'the pool is back to four workers';
    is $srv->get('/')->{status}, 200, 'serving';
    $srv->stop;
    };

done_testing;
