use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use JSON::PP        ();
use Perennial::Test qw(load_start load_stop start_status_server wait_until);

# The status page in each format, read from a real pool under load, against what this test
# did: the requests it sent and the workers it keeps busy (pid.psgi's /sleep/S holds one)

sub auto ($srv) {
    my $res = $srv->get('/server-status?auto');
    return {map { /\A([^:]+): (.*)\z/ ? ($1 => $2) : () } split /\n/, $res->{content}};
}

# Clients that each hold a worker for $seconds, in the background
sub sleepers ($srv, $n, $seconds) {
    my @pids;
    for (1 .. $n) {
        my $pid = fork // die "Can't fork: $!";
        if (!$pid) { $srv->get("/sleep/$seconds"); POSIX::_exit(0) }
        push @pids, $pid;
    }
    return @pids;
}

my $srv = start_status_server(3);

subtest '?auto: the keys and figures of Apache 2.4, counted from what was sent' => sub {
    my $before = auto($srv);
    like $before->{ServerVersion}, qr{\APerennial/\d+\.\d+\.\d+ }, 'ServerVersion';
    is $before->{ServerMPM}, 'prefork', 'ServerMPM';
    for my $key (
        'ServerUptimeSeconds', 'Total Accesses', 'Total kBytes', 'Total Duration',
        'CPUUser',             'CPUSystem',      'CPULoad',      'Uptime',
        'ReqPerSec',           'BytesPerSec',    'BytesPerReq',  'DurationPerReq',
        'BusyWorkers',         'IdleWorkers'
        )
    {
        like $before->{$key}, qr/\A-?(?:\d+|\d*\.\d+)(?:e[-+]\d+)?\z/, "$key is a number";
    }
    $srv->get('/') for 1 .. 20;
    my @sleeping = sleepers($srv, 2, 3);
    wait_until(sub { $srv->scoreboard =~ tr/W// == 2 }, 10, 'two workers busy');
    my $now = auto($srv);
    is $now->{'Total Accesses'}, $before->{'Total Accesses'} + 1 + 20,
        'Total Accesses: the first status request and twenty more';
    is $now->{BusyWorkers},       3,   'BusyWorkers: two sleepers and this request';
    is $now->{IdleWorkers},       0,   'IdleWorkers: none';
    is $now->{Processes},         3,   'Processes';
    is length $now->{Scoreboard}, 256, 'Scoreboard: a letter for each of the ServerLimit slots';
    is(($now->{Scoreboard} =~ tr/W//), 3, 'three W in the scoreboard');
    is $now->{ListenQueueLimit}, 128, 'ListenQueueLimit: the backlog the test listened with';
    is $now->{ListenQueue},      0,   'ListenQueue: nothing waiting while this request is served';
    cmp_ok $now->{'Total Duration'}, '>=', $before->{'Total Duration'}, 'Total Duration grows';
    waitpid $_, 0 for @sleeping;
};

subtest '?json and HTML show each worker and its request' => sub {
    my @sleeping = sleepers($srv, 2, 3);
    wait_until(sub { $srv->scoreboard =~ tr/W// == 2 }, 10, 'two workers busy');
    my $json = JSON::PP->new->decode($srv->get('/server-status?json')->{content});
    is $json->{busy}, 3, 'busy';
    my ($me) = grep { $_->{request} =~ /\?json/ } @{$json->{workers}};
    is $me->{conn_requests}, 0, 'requests finished on this connection: none yet (as Apache)';
    is_deeply [sort map { $_->{pid} } @{$json->{workers}}], [sort { $a <=> $b } $srv->pids],
        'a row per worker, with the pids of the scoreboard';
    my @napping = grep { $_->{request} eq 'GET /sleep/3 HTTP/1.1' } @{$json->{workers}};
    is scalar @napping, 2, 'the two sleeping requests, with their request lines';
    ok((grep { defined $_->{seconds_busy} && $_->{seconds_busy} >= 0 } @napping) == 2,
        'with the seconds since they began');
    ok((grep { $_->{memory}{rss} > 0 && $_->{memory}{private} > 0 } @{$json->{workers}}) == 3,
        'and each worker\'s memory');
    is $json->{queues}[0]{limit}, 128, 'listen queue limit';

    my $res  = $srv->get('/server-status?refresh=7');
    my $html = $res->{content};
    is $res->{headers}{refresh}, 7, 'refresh=7: a Refresh header';
    like $html, qr{<meta http-equiv="refresh" content="7">},              'and the meta tag';
    like $html, qr{3 requests currently being processed, 0 idle workers}, 'busy and idle';
    like $html, qr{<pre class="board" id="scoreboard">[W_]{3}\.+},        'the scoreboard';
    like $html, qr{<li><code>_</code> waiting for connection</li>},       'the legend';
    is scalar(() = $html =~ /<td[^>]*>GET \/sleep\/3 HTTP\/1\.1<\/td>/g), 2,
        'a row for each sleeping request';
    like $html, qr{<td>\Q$_\E</td>}, "worker $_ has a row" for $srv->pids;
    waitpid $_, 0 for @sleeping;
};

subtest 'a hostile request line is shown escaped' => sub {
    my $sock = $srv->connect;
    print {$sock}
        "GET /sleep/3?<script>alert(1)</script> HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    wait_until(sub { $srv->scoreboard =~ /W/ }, 10, 'the request is being served');
    my $html = $srv->get('/server-status')->{content};
    unlike $html, qr{<script>}, 'no markup from the client';
    like $html,   qr{GET /sleep/3\?&lt;script&gt;alert\(1\)&lt;/script&gt; HTTP/1\.1}, 'escaped';
    local $/;
    like scalar(<$sock>), qr{\AHTTP/1\.1 200 }, 'and served';
};

subtest 'Prometheus metrics: the same figures, and each worker\'s memory' => sub {
    my $before = auto($srv)->{'Total Accesses'};
    $srv->get('/') for 1 .. 5;

    # A worker counts a request, and goes back to idle, just after its response
    ok wait_until(sub { $srv->idle == 3 }, 10, 'idle'), 'the five requests done';
    my $res = $srv->get('/server-status/metrics');
    like $res->{headers}{'content-type'}, qr{\Atext/plain; version=0\.0\.4}, 'content type';
    my %m;
    for my $line (split /\n/, $res->{content}) {
        next if $line =~ /\A# (?:HELP|TYPE) perennial_\w+ /;
        like $line, qr/\Aperennial_\w+(?:\{(?:\w+="[^"]*",?)+\})? -?[\d.e+-]+\z/, 'sample line'
            or last;
        my ($name, $value) = $line =~ /\A(.+) (\S+)\z/;
        $m{$name} = $value;
    }
    is $m{perennial_accesses_total}, $before + 1 + 5, 'accesses: the ?auto request and five';
    is $m{'perennial_workers{state="busy"}'}, 1,      'this request is the busy one';
    is $m{'perennial_workers{state="idle"}'}, 2,      'two idle';
    for my $pid ($srv->pids) {
        my ($rss) = grep {/pid="$pid",kind="rss"/} keys %m;
        cmp_ok $m{$rss // ''} // 0, '>', 1_000_000, "worker $pid resident memory in bytes";
    }
    is $srv->get('/server-status?metrics')->{content}
        =~ /^perennial_listen_queue_limit\{listener="[^"]+"\} 128$/m,
        1, '?metrics is the same, with the listen queue limit';
};

subtest 'perennial status, with every worker busy and clients waiting in the listen queue' => sub {
    my @sleeping = sleepers($srv, 3, 4);
    wait_until(sub { $srv->scoreboard eq 'WWW' }, 10, 'every worker busy');
    my @waiting = map {
        my $s = $srv->connect;
        print {$s} "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        $s
    } 1 .. 2;
    my $out;
    wait_until(sub { ($out) = $srv->cli('status', '-c', $srv->conf); $out =~ /: 2 waiting/ },
        10, 'two connections in the queue');
    like $out, qr/3 requests currently being processed, 0 idle workers/,   'busy and idle';
    like $out, qr/^WWW$/m,                                                 'the scoreboard';
    like $out, qr/Listen queue 127\.0\.0\.1:\d+: 2 waiting \(limit \d+\)/, 'the listen queue';
    is scalar(() = $out =~ m{GET /sleep/4 HTTP/1\.1}g), 3, 'each worker\'s request';
    waitpid $_, 0 for @sleeping;

    for my $s (@waiting) {
        local $/;
        like scalar(<$s>), qr{\AHTTP/1\.1 200 }, 'a waiting client is served once a worker is free';
    }
};

subtest 'every format under load: the counts add up to what the clients sent' => sub {

    # The last request before (a waiting client's) is counted once its worker is idle again: its
    # client can read the end of the response before that
    wait_until(sub { $srv->idle == 3 }, 10, 'the pool is idle before');
    my $before = auto($srv)->{'Total Accesses'};
    my $load   = load_start($srv->port, clients => 2, max => 400, seconds => 20);
    my $status = 0;
    for my $round (1 .. 5) {
        my %got = map { $_ => $srv->get("/server-status$_") } '?auto', '?json', '?metrics', '';
        $status += 4;
        is((grep { $_->{status} == 200 } values %got), 4, "round $round: all four formats answer");
        like $got{'?auto'}{content}, qr/^BusyWorkers: [1-3]$/m, 'busy workers while loaded';
        ok eval { JSON::PP->new->decode($got{'?json'}{content}) }, 'the JSON parses';
    }
    my $sent = load_stop($load);
    is $sent->{failed}, 0, 'no client request failed';
    cmp_ok $sent->{ok}, '>', 0, "the clients sent $sent->{ok} requests";
    wait_until(sub { $srv->idle == 3 }, 10, 'the pool is idle again');
    is auto($srv)->{'Total Accesses'}, $before + 1 + $sent->{ok} + $status,
        'Total Accesses: the clients\' requests and the status requests, no more, no fewer';
};

subtest 'only GET and HEAD; unknown paths below the location are 404' => sub {
    my $ua = HTTP::Tiny->new;
    is $ua->post("http://127.0.0.1:" . $srv->port . '/server-status')->{status},      405, 'POST';
    is $ua->head("http://127.0.0.1:" . $srv->port . '/server-status?auto')->{status}, 200, 'HEAD';
    is $srv->get('/server-status/nope')->{status}, 404, 'below the location';
};

$srv->stop;
done_testing;
