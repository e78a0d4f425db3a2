use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(configtest http_request scratch_dir start_server write_file);

# ErrorDocument, Redirect and RedirectMatch, AddDefaultCharset, as Apache has them
my $dir = scratch_dir();
mkdir "$dir/$_" or die $! for qw(docs cgi docs/hidden);
write_file("$dir/docs/hidden/x",   "there, but redirected away\n");
write_file("$dir/docs/page.txt",   "a page\n");
write_file("$dir/docs/page.html",  "<p>html</p>\n");
write_file("$dir/cgi/notfound.pl", <<'PL', 0755);
#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "not found: $ENV{REDIRECT_URL} ($ENV{REDIRECT_STATUS}) q=$ENV{REDIRECT_QUERY_STRING}\n";
PL
my $srv = start_server(workers => 1, conf => <<"CONF");
DocumentRoot $dir/docs
ScriptAlias /cgi/ $dir/cgi/
ErrorDocument 404 /cgi/notfound.pl
ErrorDocument 405 "No such method here"
ErrorDocument 403 https://errors.example.test/forbidden
AddDefaultCharset utf-8
Redirect permanent /old https://new.example.test/new
Redirect permanent /shop /store/
Redirect gone /gone-away
RedirectMatch seeother ^/items/(\\d+)\$ /item.php?id=\$1
RedirectMatch ^/whole/.* /from\$0
Redirect 404 /hidden
RedirectMatch gone ^/vanished
RedirectMatch ^/nogroup /to\$1
<Location /closed>
    Require all denied
</Location>
<Location /moved>
    Redirect /page.txt
</Location>
CONF

sub req ($line, %h) {
    my ($method, $path) = split ' ', $line;
    my $r = http_request($srv->port, $method, 'h.test', $path, headers => \%h);
    return ($r->{status}, $r->{headers}, $r->{body});
}

subtest 'ErrorDocument: a local script, a text, a URL' => sub {
    my ($s, $h, $body) = req('GET /nothing/here.txt?x=1 HTTP/1.1');
    is $s,    404,                                          'the status of the error';
    is $body, "not found: /nothing/here.txt (404) q=x=1\n", 'the script\'s page, with REDIRECT_*';
    ($s, $h, $body) = req("DELETE /page.txt HTTP/1.1", "Content-Length" => 0);
    is_deeply [$s, $body], [405, "No such method here"],
        "a text, as Apache sends it (no newline added)";
    ($s, $h) = req('GET /closed HTTP/1.1');
    is_deeply [$s, $h->{location}], [302, 'https://errors.example.test/forbidden'],
        'a URL: a redirect';
};

subtest 'what a redirect takes from the request cannot add a header' => sub {
    my $r = http_request($srv->port, GET => 'h.test', '/old/x%0d%0aSet-Cookie:%20a=b');
    is $r->{status}, 301, 'redirected';
    is $r->{headers}{location}, 'https://new.example.test/new/x%0D%0ASet-Cookie:%20a=b',
        'the line break stays encoded in Location';
    unlike $r->{raw}, qr/^Set-Cookie/mi, 'and no Set-Cookie header came of it';
    $r = http_request($srv->port, GET => 'h.test', '/items/1%0d%0aX-Evil:%201');

    # Its head (the ErrorDocument script's page prints REDIRECT_URL, decoded as Apache's r->uri,
    # in its body, which may hold that line)
    unlike((split /\r\n\r\n/, $r->{raw}, 2)[0], qr/^X-Evil/mi, 'nor from a RedirectMatch capture');
};

subtest 'Redirect and RedirectMatch' => sub {
    my ($s, $h) = req('GET /old/a/b?q=1 HTTP/1.1');
    is_deeply [$s, $h->{location}], [301, 'https://new.example.test/new/a/b?q=1'],
        'permanent, the rest of the path and the query kept';
    is((req('GET /older HTTP/1.1'))[0], 404, 'whole segments only: /older is not /old');
    is((req('GET /shop HTTP/1.1'))[1]{location},
        '/store/',
        'a target\'s trailing slash kept when nothing of the path is left, as mod_alias');
    is((req('GET /shop/x HTTP/1.1'))[1]{location}, '/store/x', '  and not doubled when some is');
    is((req('GET /gone-away/x HTTP/1.1'))[0],      410,        'gone');
    ($s, $h) = req('GET /hidden/x HTTP/1.1');
    is_deeply [$s, $h->{location}], [404, undef],
        'a status that is not a redirect: that status, for a file that is there, and no Location';
    ($s, $h) = req('GET /vanished/x HTTP/1.1');
    is_deeply [$s, $h->{location}], [410, undef], 'RedirectMatch gone: no Location';
    is((req('GET /nogroup HTTP/1.1'))[1]{location},
        '/to', 'RedirectMatch with $1 and no group: empty, as Apache');
    ($s, $h) = req('GET /whole/x HTTP/1.1');
    is $h->{location}, '/from/whole/x', 'RedirectMatch with $0, the whole match';
    ($s, $h) = req('GET /items/42 HTTP/1.1');
    is_deeply [$s, $h->{location}], [303, '/item.php?id=42'], 'RedirectMatch with $1';
    ($s, $h) = req('GET /moved HTTP/1.1');
    is_deeply [$s, $h->{location}], [302, '/page.txt'], 'the one-argument form in a <Location>';
};

subtest 'a file with more path after it' => sub {
    is((req('GET /page.txt/extra HTTP/1.1'))[0],
        404, 'not the file: 404, as Apache\'s default handler (AcceptPathInfo Default)');
    is((req('GET /page.txt/ HTTP/1.1'))[0], 404, '  a slash after it too');
    is((req('GET /page.txt HTTP/1.1'))[0],  200, '  the file itself');
};

subtest 'AddDefaultCharset' => sub {
    is((req('GET /page.txt HTTP/1.1'))[1]{'content-type'},
        'text/plain; charset=utf-8', 'text/plain');
    is((req('GET /page.html HTTP/1.1'))[1]{'content-type'}, 'text/html; charset=utf-8',
        'text/html');
};
$srv->stop;

subtest 'a Redirect that cannot be read is a configuration error with its line' => sub {
    my ($out, $code) = configtest("<Location /a>\n    Redirect relative\n</Location>\n");
    isnt $code, 0, 'configtest fails';
    like $out, qr/line 2: Redirect: the URL to send to must be absolute or start with \//,
        'and says why';
};

done_testing;
