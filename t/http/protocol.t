use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request start_server);

my $srv  = start_server(app => 'echo.psgi', workers => 2);
my $port = $srv->port;

subtest 'GET with HTTP::Tiny' => sub {
    my $res = $srv->get('/hello');
    is $res->{status},                    200, 'status';
    is $res->{headers}{'content-length'}, 0,   'content length computed';
    like $res->{headers}{date}, qr/GMT\z/, 'Date header';
};

subtest 'HEAD has headers and no body' => sub {
    my $out = raw_request($port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    like $out, qr{\AHTTP/1\.1 200 OK\r\n}, 'status line';
    like $out, qr{\r\n\r\n\z},             'nothing after the head';
};

subtest 'pipelined requests are answered in order on one connection' => sub {
    my $req = join '', map {"POST /$_ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nr$_"} 1 .. 3;
    my $out
        = raw_request($port, $req . "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my @bodies = $out =~ /\r\n\r\n(r\d)/g;
    is_deeply \@bodies, [qw(r1 r2 r3)], 'three bodies in order';
    is scalar(() = $out =~ m{HTTP/1\.1 200}g), 4, 'four responses';
};

subtest 'HTTP/1.0 keeps the connection only when asked' => sub {
    my $out = raw_request($port, "GET / HTTP/1.0\r\n\r\n");
    like $out, qr{\AHTTP/1\.0 200 OK.*Connection: close}s, 'plain 1.0 closes';
    $out = raw_request(
        $port, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        until   => qr/\r\n\r\n/,
        timeout => 2
    );
    like $out, qr{Connection: keep-alive}, 'keep-alive when asked for';
};

subtest 'chunked request body' => sub {
    my $out = raw_request($port,
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            . "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n");
    like $out, qr{\AHTTP/1\.1 200},        'accepted';
    like $out, qr{X-Content-Length: 12},   'the app sees the decoded length';
    like $out, qr{\r\n\r\nhello, world\z}, 'decoded body';
};

subtest 'Expect: 100-continue' => sub {
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) or die $@;
    $sock->syswrite(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    );
    my $got = '';
    sysread($sock, $got, 100) for 1;
    is $got, "HTTP/1.1 100 Continue\r\n\r\n", 'interim response before the body';
    $sock->syswrite('body');
    local $/;
    my $rest = <$sock>;
    like $rest, qr{\AHTTP/1\.1 200.*\r\n\r\nbody\z}s, 'then the final response';
};

subtest 'client that disconnects mid-request does not hurt the worker' => sub {
    raw_request(
        $port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort",
        half_close => 1,
        timeout    => 2
    );
    for (1 .. 4) { is $srv->get('/')->{status}, 200, "request $_ after the disconnect" }
};

$srv->stop;
unlike $srv->error_log, qr/\[error\]/, 'no errors logged';
done_testing;
