use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir start_server write_file);

# What a URL path with . or .. segments (as written or %-encoded), or an encoded slash or NUL,
# can reach: nothing above an AliasMatch's target, no program above a ScriptAliasMatch's
# directory, no ../ in a script's PATH_INFO or a mounted application's. As Apache, the path is
# merged before it is mapped, and one that climbs above the root is a bad request (400).
my $dir = scratch_dir();
write_file("$dir/site/docs/v1/page.txt", "version one\n");
write_file("$dir/secret.txt",            "the secret\n");
write_file("$dir/cgi/show.cgi",          <<'CGI', 0755);
#!/usr/bin/perl
print "Content-Type: text/plain\n\npath_info=$ENV{PATH_INFO}\n";
CGI
write_file("$dir/cgi/hop.cgi", <<'CGI', 0755);
#!/usr/bin/perl
# A local redirect with dot segments in its path, as a script may write one
my %to = (in => '/cgi-bin/x/../show.cgi/p/./q', out => '/cgi-bin/../../../secret.txt',
    nul => '/app/x%00y');
print "Location: $to{$ENV{QUERY_STRING}}\n\n";
CGI
write_file("$dir/app.psgi", <<'PSGI');
sub { [200, ['Content-Type' => 'text/plain'], ["app saw $_[0]{PATH_INFO}\n"]] }
PSGI
system("chmod -R a+rX $dir") == 0 or die;
my $srv = start_server(workers => 1, conf => <<"CONF");
AliasMatch ^/docs/(v[0-9]+)/(.*)\$ $dir/site/docs/\$1/\$2
ScriptAliasMatch ^/run/(.*) $dir/cgi/\$1
ScriptAlias /cgi-bin/ $dir/cgi/
Alias /one $dir/site/docs/v1/page.txt
<Directory $dir>
    Require all granted
</Directory>
<Location /app>
    SetHandler psgi
    PSGIApp $dir/app.psgi
</Location>
CONF

my $get = sub ($path) {
    my $out      = raw_request($srv->port, "GET $path HTTP/1.0\r\nHost: x\r\n\r\n");
    my ($status) = $out =~ m{\AHTTP/1\.[01] (\d+)};
    my ($body)   = $out =~ /\r\n\r\n(.*)\z/s;
    return ($status // 'none', $body // '');
};
is(($get->('/docs/v1/page.txt'))[1], "version one\n",    'AliasMatch serves its file');
is(($get->('/run/show.cgi/a/b'))[1], "path_info=/a/b\n", 'ScriptAliasMatch runs its script');
is(($get->('/app/x'))[1],            "app saw /x\n",     'the application answers');
is(($get->('/one'))[1],              "version one\n",    'an Alias to a file');
for my $path (
    '/docs/v1/../../../secret.txt',           '/docs/v1/%2e%2e/%2e%2e/%2e%2e/secret.txt',
    '/docs/v1/%2E%2E/%2e./%2e%2E/secret.txt', '/run/../../../../../bin/sh',
    '/run/%2e%2e/%2e%2e/%2e%2e/usr/bin/id',   '/cgi-bin/show.cgi/../../secret.txt',
    '/cgi-bin/show.cgi/%2e%2e/x',             '/app/../secret.txt',
    '/app/%2e%2e/x',                          '/one/../secret.txt',
    '/app/a%2Fb',                             '/cgi-bin/show.cgi/a%2fb',
    '/cgi-bin/show.cgi%00.txt',               '/docs/v1/page.txt%00.png',
    '/cgi-bin/show.cgi/x%00y',
    )
{
    my ($status, $body) = $get->($path);
    like $status, qr/\A40[04]\z/,                         "$path: $status";
    unlike $body, qr/the secret|uid=|path_info=|app saw/, '  and nothing of what lies there';
}

# The path is decoded and its dot segments merged once, before anything maps it (RFC 3986
# 5.2.4, as Apache does); climbing above the root is a bad request
is(($get->('/app/a/./b/../c'))[1],       "app saw /a/c\n", 'dot segments are merged');
is(($get->('/app/a/%2e/b/%2E%2e/c'))[1], "app saw /a/c\n", 'encoded ones too');
is(($get->('/docs/v1/./page.txt'))[1],   "version one\n",  'so an AliasMatch sees the merged path');
is(($get->('/cgi-bin/x/../show.cgi/p/./q'))[1],
    "path_info=/p/q\n", 'and a script, with a PATH_INFO that has none left');
is(($get->('/run/%2e%2e/%2e%2e/usr/bin/id'))[0], 400, 'above the root: 400');
is(($get->('/cgi-bin/hop.cgi?in'))[1],
    "path_info=/p/q\n", 'a local redirect\'s path is merged the same way');
is( ($get->('/cgi-bin/hop.cgi?nul'))[1],
    "app saw /x%00y\n",
    'and an encoded NUL stays %00, as in a client\'s path'
);
my ($hop, $hop_body) = $get->('/cgi-bin/hop.cgi?out');
is $hop, 404, 'and one that climbs stops at the root, where nothing is';
unlike $hop_body, qr/the secret/, '  never above it';
like $srv->error_log,
    qr{bad request, its path climbs above the root: 400 \(request 'GET /run/%2e%2e/},
    'the log says why, with the URL as the client wrote it';
like $srv->error_log, qr{URL path with an encoded slash refused: GET /app/a%2Fb},
    'an encoded slash is refused whatever would have served it (Apache\'s AllowEncodedSlashes Off)';
like $srv->error_log,
    qr{URL path with an encoded NUL refused: GET /cgi-bin/show.cgi/x%00y \(client [\d.]+\): 404},
    'an encoded NUL where a file or a script is looked for, with its reason';

# A mounted application is given a path with %00 in it: kept encoded in PATH_INFO (no NUL byte
# reaches it), raw in REQUEST_URI
is(($get->('/app/x%00y/%41'))[1], "app saw /x%00y/A\n", 'an application sees %00 as it was sent');
is(($get->('/app/x?u=a%2Fb/../c'))[1], "app saw /x\n",  'in the query string, all of it is data');
$srv->stop;
done_testing;
