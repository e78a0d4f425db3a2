use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(raw_request start_server wait_until);

sub responses ($out) { scalar(() = $out =~ m{HTTP/1\.1 200 OK}g) }

subtest 'MaxKeepAliveRequests closes the connection after N requests' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "MaxKeepAliveRequests 3\n"
    );
    my $out = raw_request($srv->port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n" x 5);
    is responses($out), 3, 'three answered on one connection';
    like $out, qr/Connection: close\r\n.*\z/s, 'the third says close';
    $srv->stop;
};

subtest 'pipelined requests past MaxKeepAliveRequests: every response answered arrives' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "MaxKeepAliveRequests 100\n"
    );
    my $sock = $srv->connect;
    $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n" x 3000);
    select undef, undef, undef, 0.5;    # The server answers and closes before a byte is read
    my ($out, $error) = ('', '');
    while (1) {
        my $n = sysread $sock, $out, 65536, length $out;
        if (!defined $n) { $error = "$!"; last }
        last unless $n;
    }
    is responses($out), 100, 'the hundred answers, all of them';
    is $error,          '',  'then a clean end, not a reset that destroys what was still unread';
    $srv->stop;
};

subtest 'KeepAliveTimeout closes an idle connection and frees the worker' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "KeepAliveTimeout 300ms\n"
    );
    my $sock = $srv->connect;
    $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    local $/;
    my $out = <$sock>;    # returns at end of file: the server closed the idle connection
    is responses($out), 1, 'one response, then closed by the server';
    ok wait_until(sub { $srv->idle == 1 }, 5, 'idle'), 'the worker waits for the next connection';
    $srv->stop;
};

subtest 'KeepAlive Off answers with Connection: close' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 1, args => ['--disable-keepalive']);
    my $out = raw_request($srv->port,
        "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
    is responses($out), 1, 'one response per connection';
    like $out, qr/Connection: close/, 'says so';
    $srv->stop;
};

subtest 'streamed responses: chunked for HTTP/1.1, close-delimited for HTTP/1.0' => sub {
    my $srv = start_server(app => 'stream.psgi', workers => 1);
    my $out = raw_request($srv->port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    like $out, qr/Transfer-Encoding: chunked\r\n/, 'chunked';
    like $out, qr/\r\n\r\n7\r\nline 1\n\r\n7\r\nline 2\n\r\n0\r\n\r\n\z/,
        'framed chunks and the last chunk';
    $out = raw_request($srv->port, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    like $out, qr/Connection: close\r\n.*\r\n\r\nline 1\nline 2\n\z/s,
        'HTTP/1.0: raw body, then close';
    $out = raw_request($srv->port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    like $out, qr/\r\n\r\n\z/, 'HEAD: no body';
    $srv->stop;
};

subtest 'a client that leaves during a large response is dropped quietly' => sub {
    my $srv = start_server(app => 'big.psgi', workers => 1);
    for (1 .. 3) {
        my $sock = $srv->connect;
        $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        sysread $sock, my $buf, 100;
        close $sock;
    }
    is $srv->get('/')->{status},     200, 'the worker still serves';
    is + ($srv->slots)[0]{requests}, 4,   'the same worker';
    unlike $srv->error_log, qr/\[error\]/, 'no error logged';
    $srv->stop;
};
done_testing;
