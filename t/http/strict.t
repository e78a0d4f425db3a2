use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(configtest raw_request scratch_dir start_server write_file);

# Requests that Apache's HttpProtocolOptions Strict serves, and what the application is given
# for them; then HttpProtocolOptions Unsafe, set for the server or for the <VirtualHost> that
# is the default of the listener's address, and RegisteredMethods
my $dir = scratch_dir();
write_file("$dir/show.psgi", <<'PSGI');
sub {
    my ($env) = @_;
    my $body = do { local $/; readline $env->{'psgi.input'} };
    my $text = join '', map {"$_=$env->{$_}\n"}
        qw(REQUEST_METHOD REQUEST_URI PATH_INFO QUERY_STRING HTTP_HOST);
    return [200, ['Content-Type' => 'text/plain'], ["${text}body=$body\n"]];
}
PSGI

sub ask ($srv, $bytes) {
    my $out = raw_request($srv->port, $bytes, until => qr/\r\n\r\n.*body=[^\n]*\n/s, timeout => 5);
    my ($status) = $out =~ m{\AHTTP/1\.[01] (\d+)};
    my %seen     = $out =~ /^(\w+)=(.*)$/mg;
    return ($status // 'none', \%seen, $out);
}

subtest 'Strict (the default): what it serves' => sub {
    my $srv = start_server(workers => 1, args => ["$dir/show.psgi"]);
    my ($status, $seen) = ask($srv,
              "GET http://www.example.test:8080/a/%2e/b?q=1 HTTP/1.1\r\n"
            . "Host: other.example.test\r\nConnection: close\r\n\r\n");
    is $status,               200,                     'an absolute URL is served';
    is $seen->{HTTP_HOST},    'www.example.test:8080', '  its host replaces the Host header';
    is $seen->{PATH_INFO},    '/a/b',                  '  its path decoded and merged';
    is $seen->{REQUEST_URI},  'http://www.example.test:8080/a/%2e/b?q=1', '  REQUEST_URI as sent';
    is $seen->{QUERY_STRING}, 'q=1',                                      '  and its query';

    ($status, $seen)
        = ask($srv, "\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status,            200,      'empty lines before a request line are skipped';
    is $seen->{PATH_INFO}, '/after', '  and the request after them served';

    ($status, $seen) = ask($srv,
              "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            . "Connection: close\r\n\r\n3 ; name=token;q=\"a \\\" b\"\r\nabc\r\n2;x\r\nde\r\n"
            . "0\r\nX-Checksum: 1234\r\nX-More: a b\r\n\r\n");
    is $status,       200,     'chunk extensions (a token, a quoted string) and a trailer';
    is $seen->{body}, 'abcde', '  the body is the chunks\' data';

    my $out = raw_request($srv->port, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    like $out, qr{\AHTTP/1\.1 200 }, 'OPTIONS * asks the server';
    like $out, qr{\r\nAllow: GET, HEAD, POST, OPTIONS, TRACE\r\n},
        '  which says what it allows (TRACE: TraceEnable is On)';
    unlike $out, qr{REQUEST_METHOD}, '  no application is asked';

    # White space after a field's value is not the value's, as Apache reads it
    ($status, $seen) = ask($srv,
              "POST /ws HTTP/1.1\r\nHost: example.test \t\r\nContent-Length: 3 \r\n"
            . "Connection: close\r\n\r\nabc");
    is $status,            200,            'white space after a Host and a Content-Length';
    is $seen->{HTTP_HOST}, 'example.test', '  is not their value\'s';
    is $seen->{body},      'abc',          '  and the body is read by the length';
    ($status, $seen) = ask($srv,
              "POST /ws HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked  \r\n"
            . "Connection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    is $status,       200,   'nor after Transfer-Encoding: chunked';
    is $seen->{body}, 'abc', '  the body is the chunks\' data';
    ($status, $seen) = ask($srv, "GET /plain HTTP/1.1\r\nHost: x \r\nConnection: close\r\n\r\n");
    is $seen->{HTTP_HOST}, 'x', 'a plain request\'s Host (the loop in C reads it) alike';

    ($status, $seen) = ask($srv, "BREW /pot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status, 200, 'a method HTTP does not register, but a token, goes to the application';

    for my $bad (
        "G\x80T / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET /p#f HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: 1.2.3\r\n\r\n"
        )
    {
        ($status) = ask($srv, $bad);
        is $status, 400,
            'refused in Strict: ' . ($bad =~ s/([^\x20-\x7e])/sprintf '\\x%02x', ord $1/ger);
    }
    $srv->stop;
};

subtest 'Unsafe lets through what Apache\'s Unsafe does, and no more' => sub {
    my $srv = start_server(
        workers => 1,
        args    => ["$dir/show.psgi"],
        conf    => "HttpProtocolOptions Unsafe\n"
    );
    my ($status, $seen) = ask($srv, "G\x80T /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status, 200, 'a method with a byte above 0x7f';
    ($status, $seen) = ask($srv, "GET /lf HTTP/1.1\nHost: x\nConnection: close\n\n");
    is $status,            200,   'bare LF line ends';
    is $seen->{PATH_INFO}, '/lf', '  the path read';
    ($status, $seen)
        = ask($srv, "GET /p?a=1#frag HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status,               200,   'a fragment';
    is $seen->{QUERY_STRING}, 'a=1', '  dropped';
    ($status, $seen)
        = ask($srv, "GET http://u:pw\@h.test/u HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status,            200,      'a user name in a URL';
    is $seen->{HTTP_HOST}, 'h.test', '  dropped from the host';
    ($status, $seen) = ask($srv, "GET / HTTP/1.1\r\nHost: 1.2.3\r\nConnection: close\r\n\r\n");
    is $status, 200, 'a Host that breaks the Strict name rules';
    ($status, $seen) = ask($srv,
              "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            . "Connection: close\r\n\r\n3\nabc\n0\n\n");
    is $status,       200,   'chunk lines ended by a bare LF';
    is $seen->{body}, 'abc', '  the body read';

    for my $bad (
        "GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        . "3\r\nabc\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n",
        "GET /../x HTTP/1.1\r\nHost: x\r\n\r\n",
        )
    {
        ($status) = ask($srv, $bad);
        is $status, 400,
              'still refused: '
            . ($bad =~ s/\r\n.*//sr) . ' ('
            . ($bad =~ /\n(.*?)\r?\n\r?\n/s)[0] . ')';
    }
    $srv->stop;
};

subtest 'a <VirtualHost>\'s value is its address\'s, as Apache reads it' => sub {
    my $conf = <<'CONF';
<VirtualHost *:${SHOW_PORT}>
    ServerName first.test
    HttpProtocolOptions Unsafe
</VirtualHost>
<VirtualHost *:${SHOW_PORT}>
    ServerName second.test
    HttpProtocolOptions Strict
</VirtualHost>
<VirtualHost *:1>
    ServerName elsewhere.test
    HttpProtocolOptions Strict
</VirtualHost>
CONF
    my $srv = start_server(
        workers  => 1,
        args     => ["$dir/show.psgi"],
        conf     => $conf,
        port_env => 'SHOW_PORT'
    );
    for my $host ('first.test', 'second.test') {
        my ($status) = ask($srv, "GET /lf HTTP/1.1\nHost: $host\nConnection: close\n\n");
        is $status, 200, "the first host of the address says Unsafe: for Host $host too";
    }
    $srv->stop;

    $srv = start_server(
        workers  => 1,
        args     => ["$dir/show.psgi"],
        port_env => 'SHOW_PORT',
        conf     =>
            "HttpProtocolOptions Unsafe\n<VirtualHost *:\${SHOW_PORT}>\n    ServerName one.test\n"
            . "    HttpProtocolOptions Strict\n</VirtualHost>\n"
    );
    my ($status) = ask($srv, "GET /lf HTTP/1.1\nHost: x\nConnection: close\n\n");
    is $status, 400, 'a host\'s Strict over the server\'s Unsafe';
    $srv->stop;
};

subtest 'RegisteredMethods' => sub {
    my $srv = start_server(
        workers => 1,
        args    => ["$dir/show.psgi"],
        conf    => "HttpProtocolOptions Strict RegisteredMethods\n"
    );
    my $out = raw_request($srv->port, "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n");
    like $out, qr{\AHTTP/1\.1 501 .*not one HTTP registers}s,
        'an unregistered method: 501, and why';
    my ($status) = ask($srv, "PROPFIND /d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $status, 200, 'a WebDAV method is registered';
    like $srv->error_log, qr/bad request, its method is not one HTTP registers.*: 501/,
        'the log says why';
    $srv->stop;
};

subtest 'a bad value is a config error with its line' => sub {
    my ($out, $code) = configtest("HttpProtocolOptions Strict Careful\n");
    isnt $code, 0, 'configtest fails';
    like $out, qr/line 1: HttpProtocolOptions: 'Careful' is not Strict, Unsafe/, 'naming the word';
    ($out, $code) = configtest("HttpProtocolOptions Unsafe Allow0.9\n");
    is $code, 0, 'Allow0.9 is accepted';
    like $out, qr/Allow0\.9 ignored: an HTTP\/0\.9 request is refused/, '  with a note';
    ($out, $code) = configtest("HttpProtocolOptions Strict Unsafe\n");
    isnt $code, 0, 'Strict and Unsafe together are refused';
    like $out, qr/line 1: HttpProtocolOptions: 'Strict' and 'Unsafe' say opposite things/,
        '  saying so';
};
done_testing;
