use v5.36;
use lib 't/lib';
use Test::More;
use File::Path              qw(make_path);
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(apache_available request start_apache);

# A site configured as Debian's Apache 2.4 + mod_perl lays it out (apache2.conf, ports.conf,
# mods-enabled, conf-enabled, sites-enabled with two virtual hosts), read by Apache itself and
# by Perennial: both must give the same answers (status, Content-Type, body) to every request
plan skip_all => 'apache2 and libapache2-mod-perl2 are not installed (make test installs them)'
    unless apache_available();
my $site  = scratch_dir();
my $run   = scratch_dir();
my $mods  = '/usr/lib/apache2/modules';
my %files = (
    'apache2.conf' => <<"CONF",
# The main file, as Debian's (with its ServerRoot, since it is not in /etc/apache2)
ServerRoot $site
ServerName localhost
DefaultRuntimeDir \${SITE_RUN}
PidFile \${SITE_RUN}/apache2.pid
Timeout 300
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
User www-data
Group www-data
HostnameLookups Off
ErrorLog \${SITE_RUN}/error.log
LogLevel warn
IncludeOptional mods-enabled/*.load
IncludeOptional mods-enabled/*.conf
Include ports.conf
<Directory />
	Options FollowSymLinks
	AllowOverride None
	Require all denied
</Directory>
<Directory $site/www/>
	Options Indexes FollowSymLinks
	AllowOverride None
	Require all granted
</Directory>
AccessFileName .htaccess
<FilesMatch "^\\.ht">
	Require all denied
</FilesMatch>
LogFormat "%v:%p %h %l %u %t \\"%r\\" %>s %O \\"%{Referer}i\\" \\"%{User-Agent}i\\"" vhost_combined
LogFormat "%h %l %u %t \\"%r\\" %>s %O \\"%{Referer}i\\" \\"%{User-Agent}i\\"" combined
IncludeOptional conf-enabled/*.conf
IncludeOptional sites-enabled/*.conf
CONF
    'ports.conf'                    => "Listen 127.0.0.1:\${SITE_PORT}\n",
    'mods-enabled/mpm_prefork.load' => "LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so\n",
    'mods-enabled/mpm_prefork.conf' => <<'CONF',
<IfModule mpm_prefork_module>
	StartServers 2
	MinSpareServers 1
	MaxSpareServers 3
	MaxRequestWorkers 8
	MaxConnectionsPerChild 0
</IfModule>
CONF
    'mods-enabled/authz_core.load' => "LoadModule authz_core_module $mods/mod_authz_core.so\n",
    'mods-enabled/authz_host.load' => "LoadModule authz_host_module $mods/mod_authz_host.so\n",
    'mods-enabled/alias.load'      => "LoadModule alias_module $mods/mod_alias.so\n",
    'mods-enabled/cgi.load'        => "LoadModule cgi_module $mods/mod_cgi.so\n",
    'mods-enabled/dir.load'        => "LoadModule dir_module $mods/mod_dir.so\n",
    'mods-enabled/dir.conf'        =>
        "<IfModule mod_dir.c>\n\tDirectoryIndex index.html index.cgi index.pl\n</IfModule>\n",
    'mods-enabled/env.load'  => "LoadModule env_module $mods/mod_env.so\n",
    'mods-enabled/mime.load' => "LoadModule mime_module $mods/mod_mime.so\n",
    'mods-enabled/mime.conf' =>
        "<IfModule mod_mime.c>\n\tTypesConfig /etc/mime.types\n\tAddType application/x-site .site\n</IfModule>\n",
    'mods-enabled/perl.load'     => "LoadModule perl_module $mods/mod_perl.so\n",
    'conf-enabled/security.conf' => "ServerTokens Prod\nServerSignature Off\nTraceEnable Off\n",
    'conf-enabled/perl.conf'     =>
        "<IfModule mod_perl.c>\n\tPerlSwitches -I$site/perl-lib\n\tPerlModule ModPerl::Registry\n</IfModule>\n",
    'sites-enabled/000-one.conf' => <<"CONF",
<VirtualHost *:\${SITE_PORT}>
	ServerName one.test
	DocumentRoot $site/www/one
	ErrorDocument 404 /errors/404.html
	ErrorDocument 410 "This page has gone away"
	Redirect gone /old-page
	Redirect permanent /moved http://one.test/notes.txt
	CustomLog \${SITE_RUN}/one-access.log combined

	# Code loaded from inside a host: the whole server's, as mod_perl loads it without +Parent
	PerlRequire $site/perl-lib/startup.pl
</VirtualHost>
CONF
    'sites-enabled/010-two.conf' => <<"CONF",
<VirtualHost *:\${SITE_PORT}>
	ServerName two.test
	ServerAlias www.two.test
	DocumentRoot $site/www/two
	ErrorDocument 403 /errors/403.html
	ScriptAlias /cgi-bin/ $site/lib/cgi-bin/
	<Directory "$site/lib/cgi-bin">
		AllowOverride None
		Options +ExecCGI -MultiViews +SymLinksIfOwnerMatch
		Require all granted
	</Directory>
	Alias /perl/ $site/perl/
	<Directory $site/perl>
		Require all granted
	</Directory>
	<Location /perl/>
		SetHandler perl-script
		PerlResponseHandler ModPerl::Registry
		Options +ExecCGI
		PerlOptions +ParseHeaders
		PerlSetVar Greeting hello
	</Location>
	<Location /private>
		Require all granted
	</Location>

	# mod_alias's regular expressions, an Alias to a file (as Debian's W3C validator has), and
	# a compressed file sent as it is, with its Content-Encoding
	AliasMatch ^/docs/(\\w+)\\.txt\$ $site/www/one/\$1.txt
	ScriptAliasMatch ^/run/(\\w+)(/.*)?\$ $site/lib/cgi-bin/\$1.cgi\$2
	AliasMatch ^/+fb(\\.html)?\$ $site/lib/cgi-bin/hello.cgi
	<LocationMatch "^/+fb(\\.html)?\$">
		SetHandler cgi-script
	</LocationMatch>
	Alias /hi $site/lib/cgi-bin/hello.cgi
	<Location /hi>
		SetHandler cgi-script
	</Location>
	AddEncoding x-gzip .gz
	CustomLog \${SITE_RUN}/two-access.log vhost_combined
	PerlModule Site::Hello
	<Location /handler>
		SetHandler modperl
		PerlResponseHandler Site::Hello
	</Location>
</VirtualHost>
CONF

    # A second file that closes what the first one opened: both apply
    'conf-enabled/zz-private.conf' => "<Location /private>\n\tRequire all denied\n</Location>\n",
    'www/one/index.html'           => "<h1>one</h1>\n",
    'www/one/notes.txt'            => "plain notes\n",
    'www/one/data.site'            => "site data\n",
    'www/one/sub/index.html'       => "<p>sub</p>\n",
    'www/one/errors/404.html'      => "<p>no such page on one</p>\n",
    'www/one/.htsecret'            => "secret\n",
    'www/two/index.html'           => "<h1>two</h1>\n",
    'www/two/private/plan.txt'     => "the plan\n",
    'www/two/errors/403.html'      => "<p>forbidden on two</p>\n",
    'www/two/app.js.gz'            => "\x1f\x8b\x08\x00compressed, as far as the test goes",
    'share/app/hello.cgi'          => <<'CGI',
#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "hello from $ENV{SCRIPT_NAME} path=", ($ENV{PATH_INFO} // ''), " query=$ENV{QUERY_STRING} method=$ENV{REQUEST_METHOD} file=$ENV{SCRIPT_FILENAME} zero=$0\n";
CGI
    'perl-lib/startup.pl'    => "\$Site::Greeting = 'greetings';\n1;\n",
    'perl-lib/Site/Hello.pm' => <<'PM',
package Site::Hello;
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use Apache2::Const -compile => qw(OK);

sub handler {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print("$Site::Greeting from a handler loaded in a virtual host, uri=", $r->uri, "\n");
    return Apache2::Const::OK;
}

1;
PM
    'perl/greet.pl' => <<'PL',
use Apache2::RequestUtil ();
my $r = Apache2::RequestUtil->request;
print "Content-Type: text/plain\n\n";
print "greeting=", $r->dir_config('Greeting'), " script=$ENV{SCRIPT_NAME}\n";
PL
);
write_file("$site/$_", $files{$_}) for sort keys %files;

# A minute old: a file changed within the second before a request gets a weak ETag from both
# servers, and Apache's request and Perennial's could fall either side of that second
my $before = time - 60;
utime $before, $before, map {"$site/$_"} keys %files or die "Can't set the files' times: $!";
chmod 0755, "$site/share/app/hello.cgi";
make_path("$site/lib/cgi-bin");
symlink "$site/share/app/hello.cgi", "$site/lib/cgi-bin/hello.cgi" or die $!;    # Debian's layout
system("chmod -R a+rX $site") == 0 or die;

my %env = (SITE_RUN => $run, SITE_PORT => 8099);    # The port is chosen at start; -t needs one
{
    local @ENV{keys %env} = values %env;
    my $out = qx{/usr/sbin/apache2 -t -f $site/apache2.conf 2>&1};
    like $out, qr/Syntax OK/, 'Apache reads the configuration' or diag $out;
    $out = qx{$^X -Ilib bin/perennial configtest -c $site/apache2.conf 2>&1};
    like $out, qr/Syntax OK/, 'so does Perennial' or diag $out;
}
my ($apid, $aport) = start_apache("$site/apache2.conf", 'SITE_PORT', %env)
    or BAIL_OUT('Apache did not start: '
        . (eval { local (@ARGV, $/) = ("$run/error.log"); <> } // 'no error log'));
local @ENV{keys %env} = values %env;
$ENV{SITE_RUN} = scratch_dir();                     # Perennial's own run directory
my $srv   = start_server(config => "$site/apache2.conf", port_env => 'SITE_PORT');
my $pport = $srv->port;

my @requests = (
    [GET   => 'one.test',     '/'],
    [GET   => 'one.test',     '/notes.txt'],
    [GET   => 'one.test',     '/data.site'],
    [GET   => 'one.test',     '/sub'],
    [GET   => 'one.test',     '/sub/'],
    [GET   => 'one.test',     '/old-page'],
    [GET   => 'one.test',     '/moved/x?q=1'],
    [GET   => 'one.test',     '/no/such/page.html'],
    [GET   => 'one.test',     '/.htsecret'],
    [GET   => 'nobody.test',  '/'],
    [GET   => 'two.test',     '/'],
    [GET   => 'www.two.test', '/notes.txt'],
    [GET   => 'two.test',     '/private/plan.txt'],
    [GET   => 'two.test',     '/cgi-bin/hello.cgi/extra/path?x=1&y=2'],
    [POST  => 'two.test',     '/cgi-bin/hello.cgi', 'Content-Length' => 0],
    [GET   => 'two.test',     '/perl/greet.pl'],
    [GET   => 'two.test',     '/handler'],
    [GET   => 'two.test',     '/handler/more?q=1'],
    [GET   => 'two.test',     '/docs/notes.txt'],
    [GET   => 'two.test',     '/docs/none.txt'],
    [GET   => 'two.test',     '/run/hello/x/y?q=1'],
    [GET   => 'two.test',     '/run/hello'],
    [GET   => 'two.test',     '/fb.html'],
    [GET   => 'two.test',     '/fb?z=9'],
    [GET   => 'two.test',     '/hi/more?x=1'],
    [GET   => 'two.test',     '/hi'],
    [GET   => 'two.test',     '/app.js.gz'],
    [GET   => 'one.test',     '/sub/../notes.txt'],
    [GET   => 'two.test',     '/cgi-bin/x/../hello.cgi/a/./b/%2e%2e/c'],
    [GET   => 'one.test',     '/sub/../../notes.txt'],
    [GET   => 'one.test',     '/%2e%2e/notes.txt'],
    [HEAD  => 'one.test',     '/notes.txt'],
    [GET   => 'one.test',     '/notes.txt', Range            => 'bytes=0-4'],
    [GET   => 'one.test',     '/notes.txt', Range            => 'bytes=100-200'],
    [POST  => 'one.test',     '/notes.txt', 'Content-Length' => 0],
    [TRACE => 'one.test',     '/'],
);
for my $req (@requests) {
    my ($method, $host, $path, %h) = @$req;
    my $want = request($aport, $method, $host, $path, %h);
    my $got  = request($pport, $method, $host, $path, %h);
    my $what = "$method $host$path";
    is $got->{status}, $want->{status}, "$what: status $want->{status}";

    # A head refused while it is parsed (400) gets a short text/plain answer, not Apache's page
    is $got->{headers}{'content-type'}, $want->{headers}{'content-type'}, "$what: Content-Type"
        if $want->{status} != 405 && $want->{status} != 400;
    my ($g, $w) = map { ($_->{headers}{location} // '') =~ s/:\d+\//:PORT\//r } $got, $want;
    is $g, $w, "$what: Location" if $want->{status} =~ /\A30/;
    my ($gb, $wb) = map { $_->{body} =~ s/:\d+\//:PORT\//gr } $got, $want;
    is $gb, $wb, "$what: body" if $want->{status} =~ /\A(?:200|206|30\d|403|404|405|410)\z/;

    # The ETag's microseconds come through a floating-point stat: equal, or one apart
    my ($ge, $we) = map { $_->{headers}{etag} // '' } $got, $want;
    my ($gp, $gu) = $ge =~ /\A((?:W\/)?"[0-9a-f]+-)([0-9a-f]+)"\z/;
    my ($wp, $wu) = $we =~ /\A((?:W\/)?"[0-9a-f]+-)([0-9a-f]+)"\z/;
    ok defined $gp && $gp eq $wp && abs(_hex($gu) - _hex($wu)) <= 1, "$what: ETag $we"
        if length $we && $want->{status} =~ /\A(?:200|206)\z/;
    for my $name (qw(last-modified content-range content-length content-encoding)) {
        next unless defined $want->{headers}{$name} && $want->{status} =~ /\A(?:200|206)\z/;

        # A script's answer may be framed either way (mod_cgi sends a length when the whole
        # output came at once); the body is compared above
        next if $name eq 'content-length' && $path =~ m{\A/(?:cgi-bin/|perl/|run/|fb|hi)};
        is $got->{headers}{$name}, $want->{headers}{$name}, "$what: $name";
    }
}

# Not only the same answer: the one the handler gives, with what the other host's PerlRequire set
is request($pport, GET => 'two.test', '/handler')->{body},
    "greetings from a handler loaded in a virtual host, uri=/handler\n",
    'PerlModule and PerlRequire inside <VirtualHost>s loaded their code for the whole server';
$srv->stop;

sub _hex ($digits) {
    no warnings 'portable';
    return hex $digits;
}
done_testing;
