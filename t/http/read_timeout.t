use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Time::HiRes                  ();
use Perennial::HTTP::ReadTimeout qw(parse_read_timeout read_deadline read_timeouts);
use Perennial::Test              qw(configtest raw_request start_server);

# RequestReadTimeout, as mod_reqtimeout: a head and a body must come at a minimum rate, whether
# the parking process waits for a head (parking on) or the worker does (ParkKeepAlive Off)

subtest 'the directive, read as Apache reads it' => sub {
    my $l = parse_read_timeout(['header=20-40,MinRate=500', 'body=10', 'handshake=5']);
    is_deeply $l,
        {
        header => {first => 20, max => 40, rate => 500},
        body   => {first => 10, max => 0,  rate => 0}
        },
        'stages, ranges and rates; handshake= ignored';
    my $merged = read_timeouts({body => {first => 0, max => 0, rate => 0}});
    is_deeply $merged->{header}, {first => 20, max => 40, rate => 500}, 'Apache\'s default header';
    is $merged->{body}{first}, 0, 'body=0 turns the body limit off';
    is read_deadline($merged->{header}, 100, 0),      120,   '20 s at first';
    is read_deadline($merged->{header}, 100, 1000),   122,   'a second more for each 500 bytes';
    is read_deadline($merged->{header}, 100, 50_000), 140,   'never past 40';
    is read_deadline($merged->{body},   100, 0),      undef, 'no limit at 0';

    for my $bad ('header=abc', 'header=30-20,MinRate=5', 'header=20-40', 'trailer=5') {
        my (undef, $why) = parse_read_timeout([$bad]);
        ok $why, "refused: $bad ($why)";
    }
    my ($out, $code) = configtest("RequestReadTimeout header=30-20,MinRate=500\n");
    isnt $code, 0, 'a bad line stops configtest';
    like $out, qr/test\.conf line 1: RequestReadTimeout: 'header=30-20,MinRate=500': the maximum/,
        'naming the file, the line and the reason';
};

# Sends $first at once, then $slow a byte every 0.1 s until the server answers; its answer and
# the bytes sent slowly
sub trickle ($port, $first, $slow) {
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) or die $@;
    $sock->syswrite($first) if length $first;
    my ($out, $sent) = ('', 0);
    for my $byte (split //, $slow) {
        last unless $sock->syswrite($byte);
        $sent++;
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        if (select(my $r = $rin, undef, undef, 0.1)) { sysread $sock, $out, 4096; last }
    }
    return ($out, $sent);
}

my $SLOW = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " . ('s' x 200);
for my $parking ('On', 'Off') {
    subtest "ParkKeepAlive $parking: a trickled head and a trickled body get 408" => sub {
        my $srv = start_server(app => 'echo.psgi', workers => 1, conf => <<"CONF");
ParkKeepAlive $parking
RequestReadTimeout header=1-2,MinRate=500 body=1,MinRate=500
CONF
        my ($out, $sent) = trickle($srv->port, '', $SLOW);
        like $out, qr{\AHTTP/1\.[01] 408 }, 'the head: 408';
        cmp_ok $sent, '<', length $SLOW, "cut off after $sent bytes";
        ($out, $sent)
            = trickle($srv->port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\n",
            'b' x 300);
        like $out, qr{\AHTTP/1\.1 408 }, 'the body: 408';
        cmp_ok $sent, '<', 300, "cut off after $sent bytes";
        like $srv->error_log,
            qr/bad request, its head is incomplete after RequestReadTimeout \(\d+ bytes came\): 408/,
            'the head\'s refusal is logged';
        like $srv->error_log,
            qr/bad or late body, its body did not arrive within RequestReadTimeout \(\d+ bytes came\): 408/,
            'and the body\'s';
        like raw_request($srv->port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            qr{\AHTTP/1\.1 200 }, 'the worker serves on';
        $srv->stop;
    };
}

# A connection that has sent the first lines of a head, and a whole request's answer
sub slow_head ($srv) {
    my $s = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $s->syswrite("GET / HTTP/1.1\r\nHost: x\r\n");
    return $s;
}

sub normal_request ($srv, $seconds) {
    return raw_request(
        $srv->port,
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        timeout => $seconds
    );
}

subtest 'slow heads do not hold the worker: a normal client is served meanwhile' => sub {
    my $srv = start_server(app => 'echo.psgi', workers => 1, conf => <<'CONF');
RequestReadTimeout header=20-40,MinRate=500
CONF
    my @slow = map { slow_head($srv) } 1 .. 5;
    select undef, undef, undef, 0.3;
    is $srv->{board}->parked, 5, 'the five heads wait in the parking process';
    like normal_request($srv, 5), qr{\AHTTP/1\.1 200 },
        'a normal client is answered by the one worker';
    $_->syswrite("X-Late: 1\r\n\r\n") for @slow;
    for my $s (@slow) {
        my ($out, $deadline) = ('', Time::HiRes::time() + 5);
        while ($out !~ /\r\n\r\n/ && Time::HiRes::time() < $deadline) {
            my $rin = '';
            vec($rin, fileno $s, 1) = 1;
            select(my $r = $rin, undef, undef, 0.2) or next;
            sysread($s, $out, 4096, length $out)    or last;
        }
        like $out, qr{\AHTTP/1\.1 200 }, 'each slow head, once whole, is answered';
    }
    $srv->stop;
};

subtest 'ParkSlowHeads Off: the worker waits for a slow head itself' => sub {
    my $srv  = start_server(app => 'echo.psgi', workers => 1, conf => "ParkSlowHeads Off\n");
    my $slow = slow_head($srv);
    select undef, undef, undef, 0.3;
    is $srv->{board}->parked,   0,  'nothing parked';
    is normal_request($srv, 2), '', 'a normal client waits: the one worker holds the slow head';
    $srv->stop;
};

done_testing;
