package Perennial::Test::Corpus;
use v5.36;
use Exporter qw(import);

# A corpus of malformed HTTP/1.x requests, made here rather than kept as files: hand-written cases
# in categories (methods, targets, versions, line ends, header fields, Host, Content-Length,
# Transfer-Encoding, chunked framing, smuggling) and seeded random mutations of valid requests.
# Each case is [category, name, bytes]; the same seed gives the same corpus.

our @EXPORT_OK = qw(corpus);

my $H = "Host: localhost\r\n";

sub _get ($line, $head = $H) {"$line\r\n${head}Connection: close\r\n\r\n"}

sub _post ($head, $body) {"POST /p HTTP/1.1\r\n${H}${head}Connection: close\r\n\r\n$body"}

sub _chunked ($body) { _post("Transfer-Encoding: chunked\r\n", $body) }

sub _methods () {
    my @bad = (
        'GET/',    '[GET]', 'G,ET', '',      'G ET', "G\x80T", "G\xffT", "G\x00T",
        "G\tT",    'GE"T',  'GET:', 'G(E)T', 'G;T',  'G@T',    'G\\T',   'G{T}',
        "\x01GET", 'GET?',  '=GET', 'G/T'
    );
    my @good = qw(GET HEAD POST PUT DELETE OPTIONS PATCH PROPFIND BREW X-CUSTOM M.1 a~b);
    return (map { [methods => "method '$_'", _get("$_ / HTTP/1.1")] } @bad, @good),
        map { [methods => "leading '$_'", _get("${_}GET / HTTP/1.1")] } ' ', "\t", "\x0b";
}

sub _targets () {
    my @targets = (
        '/../../etc/passwd',     '/%2e%2e/%2e%2e/etc/passwd',
        '/.%2e/.%2e/etc/passwd', '/%2E%2E/x',
        '/a/../../b',            '/a/./b/../c',
        'a/b',                   'index.html',
        '*',                     '/path#fragment',
        '/#',                    '/p?q#f',
        'http://user:pw@host/',  'http://user@localhost/',
        'http://localhost/x',    'http://localhost:80/x?y',
        'HTTP://LOCALHOST/x',    'https://localhost/',
        'ftp://localhost/',      'http:/x',
        'http://',               'http:///x',
        '//x/y',                 '///x',
        '/a%00b',                '/%00',
        '/a%2fb',                '/a%2Fb',
        '/a%5cb',                '/a\\b',
        '/%zz',                  '/%',
        '/%2',                   '/%u002e',
        "/a\x7fb",               "/a\x80b",
        "/a\xffb",               '/a b',
        "/a\tb",                 '/a"b',
        '/a<b>',                 '/a{b}',
        '/a|b',                  '/a^b',
        '/a`b',                  '/~x',
        '/' . ('a' x 9000),      '/' . ('%41' x 100),
        '/?',                    '/??',
        '/?a=%00',               '/?a=../../',
        '/;jsessionid=1',        '/a/.',
        '/a/..',                 '/.',
        '/..',                   '/...',
        '/a/...',                '/.well-known/x',
        'localhost:80',          '@localhost/',
    );
    return (map { [targets => "target '$_'", _get("GET $_ HTTP/1.1")] } @targets),
        [targets => 'OPTIONS *',       _get('OPTIONS * HTTP/1.1')],
        [targets => 'OPTIONS * query', _get('OPTIONS *?x HTTP/1.1')],
        [targets => 'CONNECT',         _get('CONNECT localhost:443 HTTP/1.1')],
        [targets => 'CONNECT path',    _get('CONNECT / HTTP/1.1')],
        [
        targets => 'POST absolute',
        "POST http://localhost/p HTTP/1.1\r\n${H}Content-Length: 1\r\n\r\nx"
        ];
}

sub _versions () {
    my @versions = (
        'HTTP/1.01', 'HTTP/1.1 ', 'HTTP/1.10', 'HTTP/01.1',
        'http/1.1',  'HTTP/1,1',  'HTTP/1',    'HTTP/',
        'HTTP',      'HTTP/2.0',  'HTTP/2',    'HTTP/3.0',
        'HTTP/0.9',  'HTTP/1.2',  'HTTP/9.9',  'HTTP/1.1.1',
        'HTTPS/1.1', 'HTTP /1.1', 'HTTP/1. 1', 'xHTTP/1.1',
        'HTTP/1.1x', 'HTTP/1.0',  'HTTP/1.1',  "HTTP/1.1\x00",
        "HTTP/\xb9.1"
    );
    return (map { [versions => "version '$_'", _get("GET / $_")] } @versions),
        [versions => 'no version',     _get('GET /')],
        [versions => 'HTTP/2 preface', "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
        [versions => 'two spaces',     _get('GET  / HTTP/1.1')],
        [versions => 'tab separator',  _get("GET\t/\tHTTP/1.1")],
        [versions => 'trailing text',  _get('GET / HTTP/1.1 extra')];
}

sub _line_ends () {
    my $ok    = "GET / HTTP/1.1\r\n${H}X-A: 1\r\n\r\n";
    my @cases = (
        ['bare LF request line',    "GET / HTTP/1.1\n${H}\r\n"],
        ['bare LF everywhere',      "GET / HTTP/1.1\nHost: localhost\nX-A: 1\n\n"],
        ['bare LF in a header',     "GET / HTTP/1.1\r\n${H}X-A: 1\n\r\n"],
        ['bare LF ending the head', "GET / HTTP/1.1\r\n${H}\n"],
        ['bare CR request line',    "GET / HTTP/1.1\r${H}\r\n"],
        ['bare CR in a header',     "GET / HTTP/1.1\r\n${H}X-A: 1\rX-B: 2\r\n\r\n"],
        ['bare CR in a value',      "GET / HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n"],
        ['CR CR LF',                "GET / HTTP/1.1\r\r\n${H}\r\n"],
        ['LF CR',                   "GET / HTTP/1.1\n\r${H}\r\n"],
        ['leading CRLF',            "\r\n$ok"],
        ['leading CRLF x3',         "\r\n\r\n\r\n$ok"],
        ['leading LF',              "\n$ok"],
        ['leading space',           " $ok"],
        ['leading NUL',             "\x00$ok"],
        ['head never ends',         "GET / HTTP/1.1\r\n${H}X-A: 1\r\n"],
        ['only a request line',     "GET / HTTP/1.1\r\n"],
        ['nothing but CRLF',        "\r\n\r\n"],
        ['vertical tab line end',   "GET / HTTP/1.1\x0b${H}\r\n"],
        ['form feed in value',      "GET / HTTP/1.1\r\n${H}X-A: a\x0cb\r\n\r\n"],
        ['CRLF then space line',    "GET / HTTP/1.1\r\n${H} \r\n\r\n"],
    );
    return map { [line_ends => @$_] } @cases;
}

sub _fields () {
    my @lines = (
        'Bad Name: y',
        'X-A : y',
        "X-A\t: y",
        ' X-A: y',
        ':empty-name',
        'X-A',
        'X-A;: y',
        'X(A): y',
        'X@A: y',
        'X/A: y',
        'X[A]: y',
        'X"A": y',
        "X\x80A: y",
        "X\x00A: y",
        "X-A: a\x00b",
        "X-A: a\x01b",
        "X-A: a\x7fb",
        "X-A: a\x1bb",
        "X-A: \xff\xfe",
        "X-A: a\tb",
        'X-A: ',
        'X-A:',
        'X-A:  spaced  ',
        "X-A: 1\r\n folded",
        "X-A: 1\r\n\tfolded",
        "X-A: 1\r\n \r\n",
        'X-A: ' . ('v' x 9000),
        join("\r\n", map {"X-$_: $_"} 1 .. 101),
        'Content-Type: text/plain',
        'X-A: "quoted"',
        'X-A: a,b,c',
        'X-A: ' . ('w' x 8100),
        'Expect: 100-continue',
        'Expect: magic',
        'Connection: keep-alive, Upgrade',
        'Upgrade: h2c',
        'Range: bytes=0-0',
        'If-None-Match: *',
        'Cookie: a=1; b=2',
    );
    return
        map { [fields => "field '" . substr($_, 0, 40) . "'", _get('GET / HTTP/1.1', "$H$_\r\n")] }
        @lines;
}

sub _hosts () {
    my @hosts = (
        '',                 'local host',            'user@localhost', 'localhost:99999',
        'localhost:abc',    '::1',                   '*',              '../../etc',
        'a%00b',            '"q"',                   '<x>',            'localhost:0',
        'localhost:',       ':80',                   '1.2.3',          '123',
        '010.0.0.1',        '1.2.3.4.5',             '256.1.1.1',      'a..b',
        '.',                '..',                    'www.example.1x', '[::1]',
        '[::1]:80',         '[1::2::3]',             '[zz::1]',        '[::1',
        'a/b',              'a\\b',                  'a b',            "a\tb",
        'localhost, other', 'xn--bcher-kva.example', 'a_b.example',    '-a.example',
        'a.example.',       "caf\xc3\xa9.example",   '127.0.0.1',      '127.0.0.1:8080',
        'localhost:65535',  'localhost:65536',       'LOCALHOST',      'a' x 300,
        'localhost:080',    '0x7f.0.0.1',            '127.1',          'a:b:c'
    );
    return (map { [hosts => "Host '$_'", _get('GET / HTTP/1.1', "Host: $_\r\n")] } @hosts),
        [hosts => 'no Host in 1.1',  _get('GET / HTTP/1.1',                 '')],
        [hosts => 'no Host in 1.0',  _get('GET / HTTP/1.0',                 '')],
        [hosts => 'two Hosts',       _get('GET / HTTP/1.1',                 "${H}Host: other\r\n")],
        [hosts => 'two same Hosts',  _get('GET / HTTP/1.1',                 "$H$H")],
        [hosts => 'absolute + Host', _get('GET http://localhost/ HTTP/1.1', "Host: other\r\n")],
        [hosts => 'absolute, bad host', _get('GET http://a..b/ HTTP/1.1')],
        [hosts => 'absolute, no Host',  _get('GET http://localhost/ HTTP/1.1', '')];
}

sub _lengths () {
    my @values = (
        '5,5',  '5, 5', '5 5', '-5', '+5', '0x5', '5.0', '05', '00000005', ' 5', '5 ',
        'five', '',     '99999999999999999999', '18446744073709551616', '5;', "5\x00", '1e1', '٥'
    );
    my @cases = map { [lengths => "Content-Length '$_'", _post("Content-Length: $_\r\n", 'hello')] }
        @values;
    push @cases,
        [
        lengths => 'two equal lines',
        _post("Content-Length: 5\r\nContent-Length: 5\r\n", 'hello')
        ],
        [lengths => 'two lines',    _post("Content-Length: 5\r\nContent-Length: 6\r\n", 'hello!')],
        [lengths => 'shorter body', _post("Content-Length: 10\r\n",                     'hello')],
        [lengths => 'longer body',  _post("Content-Length: 2\r\n",                      'hello')],
        [lengths => 'GET with a body', "GET / HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello"],
        [lengths => 'no length',       _post('',                      'hello')],
        [lengths => 'zero',            _post("Content-Length: 0\r\n", '')];
    return @cases;
}

sub _encodings () {
    my $body   = "5\r\nhello\r\n0\r\n\r\n";
    my @values = (
        'chunked, chunked',  'Chunked',       'CHUNKED',     ' chunked',
        'chunked ',          'identity',      'xchunked',    'chunked, identity',
        'identity, chunked', 'gzip, chunked', 'gzip',        'chunked;q=1',
        '"chunked"',         'chunk',         "chunked\x00", ',chunked',
        'chunked,',          ''
    );
    my @cases
        = map { [encodings => "Transfer-Encoding '$_'", _post("Transfer-Encoding: $_\r\n", $body)] }
        @values;
    push @cases,
        [
        encodings => 'two TE lines',
        _post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", $body)
        ],
        [
        encodings => 'TE in HTTP/1.0',
        "POST /p HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n$body"
        ],
        [
        encodings => 'TE with space before colon',
        _post("Transfer-Encoding : chunked\r\n", $body)
        ],
        [encodings => 'TE folded',   _post("Transfer-Encoding:\r\n chunked\r\n", $body)],
        [encodings => 'TE with tab', _post("Transfer-Encoding:\tchunked\r\n",    $body)];
    return @cases;
}

sub _chunks () {
    my @bodies = (
        "5\r\nhello\r\n0\r\n\r\n",
        "5;ext\r\nhello\r\n0\r\n\r\n",
        "5;a=b\r\nhello\r\n0\r\n\r\n",
        "5;a=\"q d\"\r\nhello\r\n0\r\n\r\n",
        "5 ;a=b\r\nhello\r\n0\r\n\r\n",
        "5;a=\x00\r\nhello\r\n0\r\n\r\n",
        "5;\x00\r\nhello\r\n0\r\n\r\n",
        "5;a\x01b\r\nhello\r\n0\r\n\r\n",
        "5;a=\"unterminated\r\nhello\r\n0\r\n\r\n",
        "5;\r\nhello\r\n0\r\n\r\n",
        "5;=b\r\nhello\r\n0\r\n\r\n",
        "5;a=b c\r\nhello\r\n0\r\n\r\n",
        "5\nhello\r\n0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n",
        "5\r\nhello\r\n0\n\r\n",
        "5\r\nhello\r\n0\r\n\n",
        "5\r\nhello\r\n0\r\n",
        "5\r\nhello\r\n0",
        "5\r\nhelloXX0\r\n\r\n",
        "5\r\nhello0\r\n\r\n",
        "5\r\nhello\r\n\r\n",
        "0x5\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        "+5\r\nhello\r\n0\r\n\r\n",
        " 5\r\nhello\r\n0\r\n\r\n",
        "5\r\n\r\nhello\r\n0\r\n\r\n",
        "fffffffffffffffff\r\nhello\r\n0\r\n\r\n",
        "00005\r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
        "5\r\nhello\r\n0\r\nX-T: a\x00b\r\n\r\n",
        "5\r\nhello\r\n0\r\nX T: 1\r\n\r\n",
        "5\r\nhello\r\n0\r\nbad\r\n\r\n",
        "5\r\nhello\r\n0\r\n folded\r\n\r\n",
        "5\r\nhello\r\n0\r\nX-T: " . ('t' x 10_000) . "\r\n\r\n",
        "5\r\nhello\r\n0\r\n" . join('', map {"X-T$_: $_\r\n"} 1 .. 150) . "\r\n",
        "5\r\nhello\r\n0\r\nGET /smuggled HTTP/1.1\r\n${H}\r\n",
        "5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n",
        "5\r\nhello\r\n0\r\nX-T: 1\n\r\n",
        "3\r\nhello\r\n0\r\n\r\n",
        "7\r\nhello\r\n0\r\n\r\n",
        "g\r\nhello\r\n0\r\n\r\n",
        "\r\n5\r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n00\r\n\r\n",
        "5\x00\r\nhello\r\n0\r\n\r\n",
        "5\r\r\nhello\r\n0\r\n\r\n",
        "5;" . ('e' x 10_000) . "\r\nhello\r\n0\r\n\r\n",
    );
    return map {
        [   chunks => 'chunked '
                . (substr($_, 0, 30) =~ s/([^\x20-\x7e])/sprintf '\\x%02x', ord $1/ger),
            _chunked($_)
        ]
    } @bodies;
}

# Two servers in a row must agree on where each request ends: a proxy in front and this one
sub _smuggling () {
    my $next  = "GET /second HTTP/1.1\r\n${H}\r\n";
    my @cases = (
        ['CL.TE', "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nX"],
        [   'TE.CL', "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n",
            "8\r\nSMUGGLED\r\n0\r\n\r\n"
        ],
        ['TE.TE obfuscated', "Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n", "0\r\n\r\n"],
        ['TE with a space',  "Transfer-Encoding : chunked\r\nContent-Length: 4\r\n",   "0\r\n\r\n"],
        ['TE vertical tab',  "Transfer-Encoding:\x0bchunked\r\nContent-Length: 4\r\n", "0\r\n\r\n"],
        ['TE folded',       "Transfer-Encoding:\r\n chunked\r\nContent-Length: 4\r\n", "0\r\n\r\n"],
        ['TE xchunked',     "Transfer-Encoding: xchunked\r\nContent-Length: 4\r\n",    "0\r\n\r\n"],
        ['CL list',         "Content-Length: 4, 40\r\n",                               "0\r\n\r\n"],
        ['CL twice',        "Content-Length: 4\r\nContent-Length: 40\r\n",             "0\r\n\r\n"],
        ['CL with a plus',  "Content-Length: +4\r\n",                                  "abcd"],
        ['CL in a trailer', "Transfer-Encoding: chunked\r\n", "0\r\nContent-Length: 30\r\n\r\n"],
        ['CL then request', "Content-Length: 0\r\n",          $next],
        ['chunked then request', "Transfer-Encoding: chunked\r\n", "0\r\n\r\n$next"],
        [   'chunk size overflow',
            "Transfer-Encoding: chunked\r\n",
            "10000000000000005\r\nhello\r\n0\r\n\r\n"
        ],
        ['LF-only last chunk',  "Transfer-Encoding: chunked\r\n",                "0\n\n$next"],
        ['NUL in TE',           "Transfer-Encoding: chunked\x00\r\n",            "0\r\n\r\n"],
        ['CL with NUL',         "Content-Length: 4\x00\r\n",                     "abcd"],
        ['CL obs-fold',         "Content-Length:\r\n 4\r\n",                     "abcd"],
        ['header name with CR', "X-A\r: 1\r\nContent-Length: 4\r\n",             "abcd"],
        ['Expect and CL',       "Expect: 100-continue\r\nContent-Length: 4\r\n", "abcd"],
    );
    return map { [smuggling => $_->[0], "POST /p HTTP/1.1\r\n$H$_->[1]\r\n$_->[2]"] } @cases;
}

# Valid requests, each changed in one to three places at random
my @BASES = (
    "GET /index?x=1 HTTP/1.1\r\n${H}User-Agent: corpus\r\nAccept: */*\r\n\r\n",
    "POST /form HTTP/1.1\r\n${H}Content-Type: application/x-www-form-urlencoded\r\n"
        . "Content-Length: 7\r\n\r\na=1&b=2",
    "POST /up HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "HEAD /x HTTP/1.1\r\nHost: localhost:8080\r\nConnection: close\r\n\r\n",
);
my @BYTES = (
    "\x00", "\x01", "\t", "\n", "\r", "\x0b", "\x0c", "\x7f",
    "\x80", "\xff", ' ',  ':',  ';',  ',',    '"',    '/',
    '.',    '%',    '#',  '?',  '@',  '\\',   'A',    '0'
);

my @MUTATIONS = (
    sub ($r) { substr($r, int rand length $r, 1) = $BYTES[rand @BYTES]; $r },
    sub ($r) { substr($r, int rand length $r, 0) = $BYTES[rand @BYTES]; $r },
    sub ($r) { substr($r, int rand length $r, 1) = '';                  $r },
    sub ($r) {
        my @l = split /(?<=\n)/, $r;
        my $i = int rand @l;
        splice @l, $i, 0, $l[$i];
        join '', @l;
    },
    sub ($r) { my @l = split /(?<=\n)/, $r; splice @l, int rand @l, 1; join '', @l },
    sub ($r) { substr($r, int rand length $r, 4) =~ tr/a-zA-Z/A-Za-z/; $r },
    sub ($r) { substr $r, 0, int rand length $r },
    sub ($r) {
        my @at;
        push @at, $-[0] while $r =~ /\r\n/g;
        substr($r, $at[rand @at], 1) = '' if @at;
        $r;
    },
    sub ($r) {
        my @at;
        push @at, $-[0] while $r =~ /:/g;
        substr($r, $at[rand @at], 0) = ' ' if @at;
        $r;
    },
);

sub _mutations ($count) {
    my @cases;
    for my $n (1 .. $count) {
        my $r = $BASES[rand @BASES];
        $r = $MUTATIONS[rand @MUTATIONS]->($r) for 1 .. 1 + int rand 3;
        push @cases, [mutations => "mutation $n", $r];
    }
    return @cases;
}

sub corpus ($seed, $mutations) {
    srand $seed;
    return (
        _methods(), _targets(),   _versions(), _line_ends(),
        _fields(),  _hosts(),     _lengths(),  _encodings(),
        _chunks(),  _smuggling(), _mutations($mutations)
    );
}

1;
