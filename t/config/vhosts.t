use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::VirtualHosts;
use Perennial::Test
    qw(configtest raw_request scratch_dir script_location slurp start_server wait_until write_file);

# Name-based virtual hosts, as Apache: the Host header picks ServerName or ServerAlias, the
# first host of an address answers the others, and the main server's sections apply in each
my $dir = scratch_dir();
for my $site (qw(one two main)) {
    mkdir "$dir/$site" or die $!;
    write_file("$dir/$site/index.html", "$site\n");
    mkdir "$dir/$site/private" or die $!;
    write_file("$dir/$site/private/x.txt", "private $site\n");
}
write_file("$dir/two/page.php", "<?php echo 1; ?>\n");
write_file("$dir/cgi/server.pl", <<'PERL', 0755);
my $r = shift;
my $s = $r->server;
print "Content-Type: text/plain\n\n", join(' ', $s->server_hostname, $s->is_virtual, $s->server_admin);
PERL
my $psgi = "$dir/app.psgi";
write_file($psgi,
    q{sub { my $env = shift; [200, ['Content-Type' => 'text/plain'], ["app $env->{SCRIPT_NAME}|$env->{PATH_INFO}\n"]] }}
);

my $srv = start_server(workers => 1, conf => <<"CONF");
DocumentRoot $dir/main
LogFormat "%v %U %>s" host
CustomLog $dir/main-access.log host
<Location /private>
    Require all denied
</Location>
<Location /server-status>
    SetHandler server-status
</Location>
AddHandler application/x-httpd-php .php
@{[script_location('/registry', "$dir/cgi")]}
<VirtualHost *:*>
    ServerName www.one.test
    ServerAlias one.test *.one.test
    DocumentRoot $dir/one
</VirtualHost>
<VirtualHost *:*>
    ServerName two.test
    DocumentRoot $dir/two
    CustomLog $dir/two-access.log "two %v %U"
    SetEnv SITE two
    ServerAdmin admin\@two.test
    <Location /app>
        SetHandler psgi
        PSGIApp $psgi
    </Location>
</VirtualHost>
CONF

sub get ($host, $path) {
    my $head = defined $host ? "Host: $host\r\n" : '';
    my $out  = raw_request($srv->port, "GET $path HTTP/1.0\r\n${head}Connection: close\r\n\r\n");
    my ($status) = $out =~ m{\AHTTP/1\.\d (\d+)};
    my ($body)   = $out =~ /\r\n\r\n(.*)\z/s;
    return "$status $body";
}

is get('www.one.test',      '/'), "200 one\n", 'ServerName';
is get('ONE.test:8080',     '/'), "200 one\n", 'ServerAlias, any case, any port';
is get('deep.sub.one.test', '/'), "200 one\n", 'a wildcard alias';
is get('two.test',          '/'), "200 two\n", 'the second host';
is get('two.test.',         '/'), "200 two\n", 'a trailing dot';
is get('nobody.test',       '/'), "200 one\n", 'an unknown name: the first host of the address';
is get(undef,               '/'), "200 one\n", 'no Host at all: the same';
is get('two.test',          '/app/x'), "200 app /app|/x\n", 'a host\'s own <Location>';
like get("www.one.test", "/app/x"),
    qr{\A404 .*<p>The requested URL was not found on this server.</p>}s,
    "which the other host does not have (Apache's own 404 page)";
like get('two.test', '/private/x.txt'), qr/\A403 /,
    'the main server\'s <Location> applies in a host';
like get('one.test', '/private/x.txt'), qr/\A403 /, 'in every host';
ok wait_until(sub { slurp("$dir/two-access.log") =~ tr/\n// >= 4 }, 5, 'two\'s log'),
    'a host with its own CustomLog';
like slurp("$dir/two-access.log"), qr{^two two\.test /app/x$}m, 'writes there, with %v';
ok wait_until(sub { slurp("$dir/main-access.log") =~ /private/ }, 5, 'main log'), 'the main log';
like slurp("$dir/main-access.log"), qr{^www\.one\.test / 200$}m,
    'has the other host\'s requests, with %v its ServerName';
unlike slurp("$dir/main-access.log"), qr{^two\.test}m, 'and none of the host with its own log';
like get('two.test', '/page.php'), qr/\A500 .*administrator at \n admin\@two\.test to inform/s,
    'a host\'s own ServerAdmin in its 500 page';
is get('two.test', '/registry/server.pl'), '200 two.test 1 admin@two.test',
    "mod_perl's \$r->server is the virtual host's";
is get('one.test', '/registry/server.pl'), '200 www.one.test 1 [no address given]',
    'by its ServerName, whatever name the client used';
get('two.test', '/app/y');
like get('www.one.test', '/server-status?json'), qr/"vhost":"two\.test"/,
    'the scoreboard shows the host of the worker\'s last request';
$srv->stop;

subtest 'what a virtual host may not hold is refused with its line' => sub {
    my ($out, $code) = configtest(<<"CONF");
<VirtualHost *:80>
    ServerName a.test
    MaxClients 3
</VirtualHost>
<VirtualHost www.example.org:80>
</VirtualHost>
CONF
    is $code, 1, 'configtest fails';
    like $out, qr/line 3: MaxClients cannot be inside <VirtualHost>: it is the whole server's/,
        'a server-wide directive';
    like $out, qr/line 5: <VirtualHost> address 'www\.example\.org:80' is not IP:port/,
        'a name as the address';
};

subtest 'a request no host covers is the main server\'s, by its ServerName' => sub {
    my $seen;
    my $app = Perennial::VirtualHosts->new(
        hosts => [
            {   addrs => [['*', 81]],
                name  => 'other.test',
                app   => sub ($env) { $seen = $env->{'perennial.vhost'}; [200, [], []] }
            }
        ],
        main      => sub ($env) { $seen = $env->{'perennial.vhost'}; [200, [], []] },
        main_name => 'main.test'
    )->to_app;
    $app->({SERVER_PORT => 81, HTTP_HOST => 'x.test'});
    is $seen, 'other.test', 'the host of port 81';
    $app->({SERVER_PORT => 80, HTTP_HOST => 'other.test'});
    is $seen, 'main.test', 'port 80: the main server (the status pages show it, not the last host)';
};

subtest 'ServerName with a scheme and a port names the server by its name alone' => sub {
    my $dir = scratch_dir();
    write_file("$dir/cgi/server.pl", <<'PERL', 0755);
my $r = shift;
print "Content-Type: text/plain\n\n", join ' ', $r->server->server_hostname, $r->server->is_virtual;
PERL
    system("chmod -R a+rX $dir") == 0 or die;
    my $srv = start_server(workers => 1, conf => <<"CONF");
ServerName http://main.test:80
@{[script_location('/registry', "$dir/cgi")]}
<VirtualHost *:1>
    ServerName https://one.test:443
</VirtualHost>
CONF
    my $get = sub ($host) {
        Perennial::Test::http_request($srv->port, 'GET', $host, '/registry/server.pl')->{body};
    };
    is $get->('main.test'), 'main.test 0',
        'the main server (no host on this port): not a virtual host';
    is $get->('one.test'), 'main.test 0', 'whatever name the client gives';
    $srv->stop;

    $srv = start_server(workers => 1, conf => <<"CONF");
ServerName http://main.test:80
@{[script_location('/registry', "$dir/cgi")]}
<VirtualHost *:*>
    ServerName http://one.test
</VirtualHost>
<VirtualHost *:*>
    ServerName https://two.test:443
</VirtualHost>
CONF
    is $get->('two.test'), 'two.test 1', 'a virtual host named with a scheme and a port';
    is $get->('one.test'), 'one.test 1', 'and one with a scheme alone';
    $srv->stop;
};

done_testing;
