use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(raw_request start_server wait_until);

# Each bad request gets its status, never reaches the app, and leaves the workers serving
my $srv = start_server(app => 'echo.psgi', workers => 1, conf => <<'CONF');
LimitRequestLine 100
LimitRequestFields 5
LimitRequestFieldSize 50
LimitRequestBody 10
Timeout 1
RequestReadTimeout header=2-3,MinRate=500 body=2,MinRate=500
CONF
my $port = $srv->port;
wait_until(sub { $srv->idle == 1 }, 10, 'worker ready');
my $worker = ($srv->slots)[0]{pid};

my @cases = (
    ['malformed request line',   "GARBAGE\r\n\r\n",                                        400],
    ['space in a header name',   "GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",       400],
    ['obsolete line folding',    "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400],
    ['HTTP/1.1 without Host',    "GET / HTTP/1.1\r\n\r\n",                                 400],
    ['two Host headers',         "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",           400],
    ['unsupported HTTP version', "GET / HTTP/1.2\r\nHost: x\r\n\r\n",                      505],
    ['a "%" escape that does not decode', "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n",         400],
    [   'unsupported Transfer-Encoding',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501
    ],
    ['request line too long', 'GET /' . ('a' x 200) . " HTTP/1.1\r\nHost: x\r\n\r\n", 414],
    ['request line too long, never ended', 'GET /' . ('a' x 200),                     414],
    [   'too many header fields',
        "GET / HTTP/1.1\r\nHost: x\r\n" . join('', map {"X-$_: 1\r\n"} 1 .. 6) . "\r\n", 431
    ],
    [   'more header fields than the parser reads',
        "GET / HTTP/1.1\r\nHost: x\r\n" . join('', map {"X-$_: 1\r\n"} 1 .. 130) . "\r\n", 431
    ],
    [   'header field too large',
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " . ('b' x 60) . "\r\n\r\n", 431
    ],
    [   'header field too large, head never ended',
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " . ('b' x 60),
        431
    ],
    [   'body over LimitRequestBody',
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n01234567890", 413
    ],
    [   'chunked body over LimitRequestBody',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "6\r\n012345\r\n6\r\n678901\r\n0\r\n\r\n",
        413
    ],
    [   'bad chunk size',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        400
    ],
    [   'a chunk size of 15 hex digits',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nabc\r\n",
        413
    ],
    ['a version written HTTP/1.01',      "GET / HTTP/1.01\r\nHost: x\r\n\r\n",               400],
    ['escape codes in the request line', "GET /\x1b[31mred\x07 HTTP/1.1\r\nHost: x\r\n\r\n", 400],
    [   'Content-Length and Transfer-Encoding',
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            . "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        400
    ],
    [   'two different Content-Length values',
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400
    ],
    ['negative Content-Length', "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400],
    [   'unknown Expect',
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: magic\r\n\r\nx", 417
    ],

    # Apache's HttpProtocolOptions Strict and RFC 9112's grammar
    [   'a control character in a header name',
        "GET / HTTP/1.1\r\nHost: x\r\nX-A\x01b: 1\r\n\r\n",
        400
    ],
    ['a method that is not a token',      "GET/ / HTTP/1.1\r\nHost: x\r\n\r\n",              400],
    ['a method with a byte above 0x7f',   "G\x80T / HTTP/1.1\r\nHost: x\r\n\r\n",            400],
    ['a target that is not a path',       "GET a/b HTTP/1.1\r\nHost: x\r\n\r\n",             400],
    ['an asterisk target for GET',        "GET * HTTP/1.1\r\nHost: x\r\n\r\n",               400],
    ['a target with a fragment',          "GET /p#frag HTTP/1.1\r\nHost: x\r\n\r\n",         400],
    ['a URL with a user and password',    "GET http://u:pw\@x/ HTTP/1.1\r\nHost: x\r\n\r\n", 400],
    ['a URL of another scheme',           "GET ftp://x/ HTTP/1.1\r\nHost: x\r\n\r\n",        400],
    ['CONNECT: not a proxy',              "CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n",       501],
    ['a request line ended by a bare LF', "GET / HTTP/1.1\nHost: x\r\n\r\n",                 400],
    ['a header line ended by a bare LF',  "GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",       400],
    ['an HTTP/2 connection preface',      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",                505],
    [   'a NUL in a chunk extension',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "3;a=\x00\r\nabc\r\n0\r\n\r\n",
        400
    ],
    [   'a chunk-size line ended by a bare LF',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", 400
    ],
    [   'chunk data ended by a bare LF',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n", 400
    ],
    [   'a NUL in a trailer',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "3\r\nabc\r\n0\r\nX-T: a\x00b\r\n\r\n",
        400
    ],
    [   'a trailer field longer than LimitRequestFieldSize',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "3\r\nabc\r\n0\r\nX-T: "
            . ('t' x 10_000)
            . "\r\n\r\n",
        400
    ],
    [   'a trailer line that is a request line (a final chunk without its CRLF)',
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "3\r\nabc\r\n0\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
        400
    ],
);
my @reasons;
for my $case (@cases) {
    my ($name, $bytes, $status) = @$case;
    subtest $name => sub {
        my $out = raw_request($port, $bytes);
        like $out,   qr{\AHTTP/1\.[01] $status }, "answered $status";
        like $out,   qr{Connection: close},       'and the connection is closed';
        unlike $out, qr{X-Length},                'the app never saw it';
        like $out, qr{\r\n\r\n$status [^\n]+\nThe request was refused: [^\n\x1b]+\.\n\z},
            'the body says why, in a sentence of the server\'s own';
        push @reasons, [$name, $1] if $out =~ /The request was refused: ([^\n]+)\.\n\z/;
    };
}

subtest 'a Host that is not a host is refused, as Apache\'s strict check refuses it' => sub {
    for my $host (
        '',               'local host', 'user@localhost', 'localhost:99999',
        'localhost:abc',  '::1',        '*',              '../../etc',
        'a%00b',          '"q"',        '<x>',            'localhost:0',
        '1.2.3',          '123',        '010.0.0.1',      'a..b',
        'www.example.1x', '[1::2::3]',
        )
    {
        my $out = raw_request($port, "GET / HTTP/1.1\r\nHost: $host\r\n\r\n");
        like $out, qr{\AHTTP/1\.1 400 .*its Host is not a name or an address}s, "Host: '$host'";
    }
    for my $host ('localhost', '127.0.0.1:8080', '[::1]:80', 'www.example.test.', 'a_b-c',
        '10.0.0.1')
    {
        my $out = raw_request($port, "GET / HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n\r\n");
        like $out, qr{\AHTTP/1\.1 200 }, "Host: '$host' is served";
    }
};

subtest 'a list of Content-Length values is refused, even of one value repeated, as Apache' => sub {
    for my $head ("Content-Length: 3\r\nContent-Length: 3\r\n", "Content-Length: 3,3\r\n") {
        my $out = raw_request($port, "POST / HTTP/1.1\r\nHost: x\r\n${head}\r\nabc");
        like $out, qr{\AHTTP/1\.1 400 .*Content-Length is a list}s,
            'refused, and the body says why';
    }
};

subtest 'a client that sends part of a head and stops gets 408 after Timeout' => sub {
    my $out = raw_request($port, "GET / HTTP/1.1\r\nHost: x\r\n", timeout => 10);
    like $out, qr{\AHTTP/1\.1 408 }, '408, in the protocol of the request line';
};

subtest 'a client that sends nothing waits in the kernel, never holding a worker' => sub {
    my $out = raw_request($port, '', timeout => 3);
    is $out,                     '',  'no answer';
    is $srv->get('/')->{status}, 200, 'the worker serves again';
};

subtest 'a head that trickles in a byte at a time gets 408 after RequestReadTimeout' => sub {
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) or die $@;
    my ($out, $sent) = ('', 0);
    for my $byte (split //, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " . ('s' x 40)) {
        last unless $sock->syswrite($byte);
        $sent++;
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        if (select(my $r = $rin, undef, undef, 0.1)) { sysread $sock, $out, 4096; last }
    }
    like $out, qr{\AHTTP/1\.[01] 408 }, 'a trickled head: 408';
    cmp_ok $sent, '<', 60, "cut off after $sent bytes";
};

subtest 'a thousand and more Host names: the worker judges each and lives' => sub {
    my $answered = 0;
    for my $batch (0 .. 11) {
        my @hosts = map {"h$_.example"} $batch * 100 + 1 .. $batch * 100 + 100;
        $hosts[-1] .= "\r\nConnection: close";    # The last of each connection closes it
        my $out = raw_request($port, join '', map {"GET / HTTP/1.1\r\nHost: $_\r\n\r\n"} @hosts);
        $answered += () = $out =~ m{^HTTP/1\.1 200 }mg;
    }
    is $answered, 1200, 'every request answered';
};

ok wait_until(sub { $srv->idle == 1 }, 5, 'idle worker'), 'the scoreboard shows the worker idle';
is + ($srv->slots)[0]{pid}, $worker, 'the same worker survived all of it';
my $log = $srv->error_log;
like $log, qr/bad request, its request line is longer than LimitRequestLine \(\d+\): 414/,
    'refusals are logged with the reason';
like $log, qr/bad request, a header line is not "name: value"/, 'obsolete line folding';
for my $refused (@reasons) {
    my ($name, $why) = @$refused;
    like $log,
        qr/(?:bad request|refused body|bad or late body|unsupported Expect), \Q$why\E: \d{3} /,
        "the log gives the reason the body gave: $name";
}
like $log, qr/refused body, its body is larger than LimitRequestBody \(10\): 413/,
    'body refusals too';
like $log, qr/bad request, its head is incomplete after Timeout \(\d+ bytes came\): 408/,
    'a silent client is logged';
like $log, qr/bad request, its head is incomplete after RequestReadTimeout \(\d+ bytes came\): 408/,
    'and a trickling one';
like $srv->access_log, qr/"GARBAGE" 400 [1-9]\d* /,
    'and written to the access log as sent, with the bytes of the answer\'s body';
like $log,
    qr/its Host is not a name .*: 400 \(request 'GET \/ HTTP\/1\.1', client [\d.]+, sent 'Host: local host'\)/,
    'the log names the bytes that broke the rule';
like $log, qr/a header line is malformed .*, sent 'X-A\\x01b: 1'\)/, '  a header line\'s, escaped';
like $log,
    qr/its target has a "%" that is not followed by two hex digits .*: 400 \(request 'GET \/a%zz HTTP\/1\.1', client 127\.0\.0\.1\)/,
    'a target that does not decode: the reason, and the client (the parser empties the env)';
like $log, qr/a chunk-size line is not hex digits.*, sent 'zz\\r\\n'\)/,
    '  a body line\'s, its line end too (\\r\\n, as Apache escapes it)';
unlike $log, qr/non-portable|at \S+ line \d+\./, 'no client input makes a perl warning';

# A client that closes in the middle of its body: no one to answer, the app never runs, and
# the logs say so (an access line with 400, an error line with what came)
{
    my $conn = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) or die $@;
    $conn->syswrite("POST /half HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nhalf");
    shutdown $conn, 1;
    my $answer = '';
    while (sysread $conn, $answer, 4096, length $answer) { }
    is $answer, '', 'a body cut short by the client: nothing is answered';
    ok wait_until(
        sub {
            $srv->error_log
                =~ /client closed the connection in its request body, after 4 bytes of it \(request POST \/half, client [\d.]+\)/;
        },
        10,
        'logged'
        ),
        '  and the error log says what came';
    ok wait_until(sub { $srv->access_log =~ m{"POST /half HTTP/1\.1" 400 } }, 10, 'access line'),
        '  the access log has it as 400';
}
unlike $log, qr/[\x1b\x07]/,          'nor puts control characters in the log';
like $log,   qr{/\\x1b\[31mred\\x07}, 'they are written escaped';
$srv->stop;
done_testing;
