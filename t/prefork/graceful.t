use v5.36;
use lib 't/lib';
use Test::More;
use Cwd qw(abs_path);
use IO::Socket::IP;
use Time::HiRes     ();
use Perennial::Test qw(start_server wait_until);

my $psgi = abs_path('t/psgi');

subtest 'graceful restart under continuous requests loses none' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 2);
    my ($ok, $failed, %pids) = (0, 0);
    for my $i (1 .. 400) {
        my $res = $srv->get('/');
        if ($res->{status} == 200) { $ok++; $pids{$res->{content}}++ }
        else                       { $failed++; diag "request $i: $res->{status} $res->{content}" }
        next unless $i % 100 == 50;

        # Each restart asked for once the one before has begun: two USR1s that reach the
        # manager while it is still making a generation are one restart, as under Apache
        my $generation = 2 + int($i / 100);
        $srv->signal('USR1');
        wait_until(sub { $srv->error_log =~ /generation $generation started/ },
            10, "generation $generation");
    }
    is $failed, 0,   'no request failed';
    is $ok,     400, 'all 400 answered';
    cmp_ok scalar(keys %pids), '>=', 4, 'several generations of workers answered';

    my @generations = $srv->error_log =~ /generation (\d+) started/g;
    is_deeply \@generations, [2 .. 5], 'four graceful restarts';
    $srv->stop;
};

subtest 'graceful restart: new workers first, then the old ones go as the new are ready' => sub {
    my $srv = start_server(
        app  => 'pid.psgi',
        conf => "StartServers 2\nMinSpareServers 1\nMaxSpareServers 4\nMaxClients 8\n"
    );
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    my @old = $srv->pids;
    $srv->signal('USR1');
    ok $srv->wait_replaced(\@old, 2), 'the old generation was replaced';
    my ($after) = $srv->error_log =~ /graceful restart requested\n(.*)\z/s;
    my @events
        = map { /worker (\d+) started/ ? "new" : /stopping worker (\d+) gracefully/ ? "stop" : () }
        split /\n/, $after // '';
    my $first_stop = (grep { $events[$_] eq 'stop' } 0 .. $#events)[0] // 0;
    is scalar(grep { $_ eq 'new' } @events[0 .. $first_stop]), 2,
        'both new workers were started before the first old one was asked to stop';
    my $started = () = $srv->error_log =~ /worker \d+ started/g;
    is $started, 4, 'no extra workers: two old, two new';
    $srv->stop;
};

subtest 'graceful restart re-reads the configuration, and refuses a broken one' => sub {
    my $srv = start_server(
        conf    => "<Location />\nSetHandler psgi\nPSGIApp $psgi/version_a.psgi\n</Location>\n",
        workers => 1
    );
    like $srv->get('/')->{content}, qr/\AA /, 'first version';
    _edit($srv->conf, 'version_a', 'version_b');
    $srv->signal('USR1');
    ok wait_until(sub { $srv->get('/')->{content} =~ /\AB / }, 10, 'new version'),
        'new application after USR1';

    _edit($srv->conf, 'SetHandler psgi', 'SetHandler psgi\nNoSuchDirective 1');
    $srv->signal('USR1');
    ok wait_until(sub { $srv->error_log =~ /graceful restart refused/ }, 10, 'refusal logged'),
        'broken config refused';
    like $srv->error_log, qr/perennial\.conf line \d+: unknown directive 'NoSuchDirective'/,
        'with file, line and reason';
    like $srv->get('/')->{content}, qr/\AB /, 'still serving the running configuration';
    $srv->stop;
};

subtest 'HUP restarts: workers stopped at once, a new generation started' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 2);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    my @old = $srv->pids;
    $srv->signal('HUP');
    ok $srv->wait_replaced(\@old, 2), 'two new workers';
    like $srv->error_log, qr/restart requested/,    'logged';
    like $srv->error_log, qr/exited \(signal 15, /, 'old workers were stopped with TERM';
    is $srv->get('/')->{status}, 200, 'serving';
    $srv->stop;
};

subtest 'graceful-stop lets the request in flight finish' => sub {
    my $srv  = start_server(app => 'pid.psgi', workers => 2);
    my $sock = $srv->connect;
    $sock->syswrite("GET /sleep/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ok wait_until(sub { $srv->scoreboard =~ /W/ }, 5, 'request running'), 'a request is running';
    my ($out, $code) = $srv->cli('graceful-stop', '--pid', $srv->pid_file);
    is $code, 0, 'graceful-stop command' or diag $out;
    local $/;
    like <$sock>, qr{\AHTTP/1\.1 200 OK}, 'the running request completed';
    is $srv->wait_exit, 0, 'the manager exited cleanly';
    ok !-e $srv->pid_file, 'pid file removed';
    like $srv->error_log, qr/graceful stop requested/, 'logged';
};

subtest 'stop, and commands that find no server' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 1);
    my ($out, $code) = $srv->cli('stop', '--pid', $srv->pid_file);
    is $code, 0, 'stop command';
    like $out, qr/manager \d+ stopped/, 'waits for the manager';

    # Its pid file is gone (what `stop` waits for); the process ends just after
    ok wait_until(sub { !$srv->alive }, 5, 'the manager exited'), 'gone';
    ($out, $code) = $srv->cli('stop', '--pid', $srv->pid_file);
    is $code, 1, 'a second stop fails';
    like $out, qr/Can't find a running server/, 'and says why';
};

subtest 'TERM to the whole process group: nothing is started again on the way out' => sub {

    # As systemd stops a service, and timeout(1) or Ctrl-\ a command: the workers and the
    # parking process get the signal with the manager, and may exit before it reads its own
    my $srv   = start_server(app => 'pid.psgi', workers => 2);
    my $start = Time::HiRes::time();

    # Past their first second: a worker that dies younger waits for the manager's next look
    ok wait_until(sub { $srv->idle == 2 && Time::HiRes::time() - $start > 1.5 }, 10, 'two idle'),
        'two workers, a second and a half old';
    my $before = length $srv->error_log;
    kill 'TERM', -$srv->pid;
    $srv->wait_exit;
    ok !$srv->alive, 'the server stopped';
    my $after = substr $srv->error_log, $before;
    like $after, qr/worker \d+ exited \(signal 15/, 'the workers exited on the TERM';
    unlike $after, qr/(?:worker|parking process) \d+ started/,
        'and no worker or parking process was started after it';
};

subtest 'TTIN and TTOU add and remove a worker' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 2);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two workers'), 'two workers';
    $srv->signal('TTIN');
    ok wait_until(sub { $srv->idle == 3 }, 10, 'three workers'), 'TTIN: three';
    $srv->signal('TTOU');
    ok wait_until(sub { $srv->workers == 2 }, 10, 'two again'), 'TTOU: two again';
    like $srv->error_log, qr/TTIN: one worker more/, 'logged';
    $srv->stop;
};

subtest 'a connection accepted just before the stop signal is still served' => sub {

    # A worker that holds a head's first part (as without parking: with it, the next test)
    my $srv  = start_server(app => 'pid.psgi', workers => 1, conf => "ParkKeepAlive Off\n");
    my $sock = $srv->connect;
    $sock->syswrite("GET / HTTP/1.1\r\n");    # The kernel hands over a connection with data
    ok wait_until(sub { $srv->scoreboard eq 'R' }, 5, 'accepted'),
        'the worker accepted and waits for the rest of the request';
    my ($worker) = map { $_->{pid} } $srv->slots;
    kill 'QUIT', $worker;
    $sock->syswrite("Host: x\r\n\r\n");
    local $/;
    my $out = <$sock>;
    like $out, qr{\AHTTP/1\.1 200 OK.*Connection: close.*\r\n\r\n$worker\z}s,
        'answered, then closed';
    ok wait_until(sub { $srv->error_log =~ /worker $worker exited \(status 0, 1 requests\)/ },
        5, 'exit'),
        'and the worker left';
    $srv->stop;
};

subtest 'a head parked half-read when its worker stops is served by the next worker' => sub {
    my $srv  = start_server(app => 'pid.psgi', workers => 1);
    my $sock = $srv->connect;
    $sock->syswrite("GET / HTTP/1.1\r\n");
    ok wait_until(sub { $srv->{board}->parked == 1 }, 5, 'parked'),
        'the first part waits in the parking process';
    my ($worker) = map { $_->{pid} } $srv->slots;
    kill 'QUIT', $worker;
    ok wait_until(sub { $srv->error_log =~ /worker $worker exited/ }, 5, 'exit'),
        'the worker leaves at once';
    $sock->syswrite("Host: x\r\n\r\n");
    my $out = '';
    while (sysread $sock, $out, 4096, length $out) { last if $out =~ /\r\n\r\n\d+\z/ }
    like $out, qr{\AHTTP/1\.1 200 OK.*\r\n\r\n(\d+)\z}s, 'the request is answered';
    my ($by) = $out =~ /(\d+)\z/;
    isnt $by, $worker, 'by its successor';
    $srv->stop;
};

subtest 'GracefulShutdownTimeout bounds the wait for a request that does not finish' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "GracefulShutdownTimeout 1\n"
    );
    my $sock = $srv->connect;
    $sock->syswrite("GET /sleep/30 HTTP/1.1\r\nHost: x\r\n\r\n");
    ok wait_until(sub { $srv->scoreboard =~ /W/ }, 5, 'request running'),
        'a long request is running';
    $srv->signal('WINCH');
    is $srv->wait_exit(10), 0, 'the manager exited long before the request would have ended';
    like $srv->error_log, qr/GracefulShutdownTimeout reached, stopping 1 workers/, 'and said why';
};

sub _edit ($file, $from, $to) {
    open(my $in, '<', $file) or die $!;
    my $text = do { local $/; <$in> };
    close $in;
    $text =~ s/\Q$from\E/$to =~ s{\\n}{\n}gr/e;
    open(my $out, '>', $file) or die $!;
    print {$out} $text;
    close $out;
}

done_testing;
