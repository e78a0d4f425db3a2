use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(raw_request scratch_dir start_server write_file);
use Perennial::Test::Apache qw(apache_available apache_head start_apache);

# The CGI variables Apache gives a script besides RFC 3875's, each compared with Apache's for
# the same request: mod_cgi for a ScriptAlias, a DocumentRoot and a ScriptAliasMatch script,
# ModPerl::Registry for an Alias handed to perl-script. CONTEXT_PREFIX and
# CONTEXT_DOCUMENT_ROOT are the Alias as written ('' and the DocumentRoot for a DocumentRoot
# script, and for an AliasMatch's); REQUEST_SCHEME, SERVER_ADDR, SERVER_ADMIN; SERVER_SIGNATURE
# empty under ServerSignature Off and ServerSignature's line under On (the product named is
# each server's own; an error page's foot is the same line); SERVER_PORT, the port the client
# named in Host, else the scheme's; and no PATH_INFO when there is none. On the C build, and on
# the Perl one.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my @NAMES = qw(CONTEXT_PREFIX CONTEXT_DOCUMENT_ROOT DOCUMENT_ROOT SCRIPT_NAME PATH_INFO
    PATH_TRANSLATED REQUEST_SCHEME SERVER_ADDR SERVER_ADMIN SERVER_SIGNATURE SERVER_NAME SERVER_PORT);
my $dir = scratch_dir();
my ($cgi, $docs, $other) = map {"$dir/$_"} qw(cgi-bin docs other);
mkdir $_ or die "$_: $!" for $cgi, $docs, $other;
my $script = "#!$^X\nprint \"Content-Type: text/plain\\n\\n\";\n"
    . "print \"\$_=\", \$ENV{\$_} // '(unset)', \"|\\n\" for qw(@NAMES);\n";
write_file("$_/env.pl", $script, 0755) for $cgi, $docs, $other;

# A local redirect (Location: a path, no Status): the request it becomes sees the client's
# REQUEST_URI and what it was as REDIRECT_ variables
my @AFTER = qw(REQUEST_URI REQUEST_METHOD QUERY_STRING SCRIPT_NAME PATH_INFO REDIRECT_STATUS
    REDIRECT_URL REDIRECT_QUERY_STRING REDIRECT_REQUEST_METHOD);
for ([$cgi, '/cgi-bin'], [$other, '/registry']) {
    my ($in, $url) = @$_;
    write_file("$in/from.pl", "#!$^X\nprint \"Location: $url/to.pl/pi?x=2\\n\\n\";\n", 0755);
    write_file("$in/to.pl",   $script =~ s/qw\(\Q@NAMES\E\)/qw(@AFTER)/r,              0755);
}

# The request object's name and port for the server, as the variables' (mod_perl's r->hostname:
# none without Host)
write_file(
    "$other/r.pl",
    "my \$r = shift; print \"Content-Type: text/plain\\n\\n\", 'HOSTNAME=', \$r->hostname // '(undef)',\n"
        . "  \"|\\nGET_SERVER_NAME=\", \$r->get_server_name, \"|\\nGET_SERVER_PORT=\", \$r->get_server_port, \"|\\n\";\n",
    0755
);
system("chmod -R a+rX $dir") == 0 or die;

sub conf ($signature, $name = 'localhost') {
    return <<"CONF";
ServerName $name
ServerAdmin webmaster\@example.org
ServerSignature $signature
DocumentRoot $docs
ScriptAlias /cgi-bin/ $cgi/
ScriptAlias /single.pl $cgi/env.pl
ScriptAliasMatch ^/matched/(.*) $cgi/\$1
Alias /registry $other
<Location /registry>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
</Location>
<Directory $dir>
    Require all granted
    Options +ExecCGI
    AddHandler cgi-script .pl
</Directory>
CONF
}

# Each variable of the answer to a request for "PATH HOST", with ServerSignature's product made
# the same
sub variables ($port, $request) {
    my ($path, $host) = split ' ', $request;
    my $answer = raw_request($port,
        "GET $path HTTP/1.0\r\n" . ($host eq '-' ? '' : "Host: $host\r\n") . "\r\n");
    my ($body) = $answer =~ /\r\n\r\n(.*)\z/s or return {};
    $body =~ s{<address>.*? Server at }{<address>SERVER Server at }g;
    return {$body =~ /^([A-Z_]+)=(.*?)\|\n/msg};    # ServerSignature's line ends with a newline
}

# The foot of the 404 page (ServerSignature's line, with its product made the same) for a
# request with that Host
my @HOSTS = ('localhost:99', 'localhost', 'LocalHost:0099');

sub error_page_foot ($port, $host) {
    my $answer = raw_request($port, "GET /none HTTP/1.0\r\nHost: $host\r\n\r\n");
    my ($foot) = $answer =~ m{(<hr>\n<address>.*</address>\n)}s;
    return ($foot // 'none') =~ s{<address>.*? Server at }{<address>SERVER Server at }r;
}

# Each path with a port in Host (as a browser names a port not its scheme's), two without (a
# proxy's request): SERVER_PORT is the port named, else the scheme's
my @PATHS = (
    (   map {"$_ localhost:99"}
            qw(/cgi-bin/env.pl /cgi-bin/env.pl/more/path /env.pl /matched/env.pl/x
            /registry/env.pl /registry/env.pl/y)
    ),
    '/single.pl localhost:99',           # A ScriptAlias to a file: its context as written
    '/cgi-bin/env.pl LocalHost:0099',    # Apache's name in lower case, its port a number
    '/cgi-bin/env.pl localhost',
    '/registry/env.pl localhost',
    '/cgi-bin/env.pl -',                 # No Host: ServerName, and its port or the scheme's
    '/cgi-bin/from.pl/a?q=1 localhost',
    '/registry/from.pl?q=1 localhost',
    (map {"/registry/r.pl $_"} qw(localhost:99 LocalHost:0099 LOCALHOST. localhost -))
);

# ServerSignature On, Off, and EMail with a ServerName that names a port (SERVER_PORT when Host
# names none); the C build in each, the Perl one too under On
for my $round (
    ['On',    'localhost',      80,   qw(C Perl)],
    ['Off',   'localhost',      80,   'C'],
    ['EMail', 'localhost:8081', 8081, 'C']
    )
{
    my ($signature, $name, $port, @builds) = @$round;
    write_file("$dir/apache.conf",
              apache_head($dir, 'ENV_PORT', qw(authz_core alias cgi mime perl))
            . conf($signature, $name));
    my ($apid, $aport) = start_apache("$dir/apache.conf", 'ENV_PORT', SITE_RUN => scratch_dir())
        or BAIL_OUT('Apache did not start');
    my %want = map { $_ => variables($aport, $_) } @PATHS;
    my %page = map { $_ => error_page_foot($aport, $_) } @HOSTS;
    is_deeply [map { $_->{SERVER_PORT} }
            @want{'/cgi-bin/env.pl localhost:99', '/cgi-bin/env.pl localhost', '/cgi-bin/env.pl -'}
        ],
        [99, $port, $port],
        "SERVER_PORT: Apache's is the port Host names, else ServerName's, else 80";
    is_deeply [
        map {
            join ' ', @{$want{"/registry/r.pl $_"}}{qw(HOSTNAME GET_SERVER_NAME GET_SERVER_PORT)}
        } qw(LocalHost:0099 -)
        ],
        ['localhost localhost 99', "(undef) localhost $port"],
        "Apache's request object: Host's name in lower case, none without Host, and the port";
    is $want{'/cgi-bin/env.pl -'}{SERVER_NAME}, 'localhost',
        "without Host, Apache's SERVER_NAME is ServerName";
    is_deeply [@{$want{'/cgi-bin/from.pl/a?q=1 localhost'}}{@AFTER}],
        [qw(/cgi-bin/from.pl/a?q=1 GET x=2 /cgi-bin/to.pl /pi 200 /cgi-bin/from.pl/a q=1 GET)],
        "a local redirect: Apache's request keeps the client's REQUEST_URI, and REDIRECT_ ones";
    my $host
        = $signature eq 'EMail'
        ? '<a href="mailto:webmaster@example.org">localhost</a>'
        : 'localhost';
    is_deeply [@{$want{'/cgi-bin/env.pl localhost:99'}}{qw(SERVER_ADMIN SERVER_SIGNATURE)}],
        [
        'webmaster@example.org',
        $signature eq 'Off' ? '' : "<address>SERVER Server at $host Port 99</address>\n"
        ],
        "ServerSignature $signature: Apache's answers are there to compare";

    for my $build (@builds) {
        local $ENV{PERENNIAL_PURE_PERL} = $build eq 'Perl' ? 1 : undef;
        my $srv = start_server(workers => 1, conf => conf($signature, $name));
        for my $path (@PATHS) {
            is_deeply variables($srv->{port}, $path), $want{$path},
                "ServerSignature $signature, $build build: $path"
                or diag explain $want{$path};
        }
        is error_page_foot($srv->{port}, $_), $page{$_},
            "ServerSignature $signature, $build build: an error page's foot, Host '$_'"
            for @HOSTS;
        $srv->stop;
    }
    kill 'TERM', $apid;
    waitpid $apid, 0;
}

done_testing;
