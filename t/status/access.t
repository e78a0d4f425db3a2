use v5.36;
use lib 't/lib';
use Test::More;
use Cwd ();
use Perennial::Access;
use Perennial::Test qw(configtest raw_request scratch_dir start_server);

# Status pages answer this host only, unless Require says otherwise (Apache 2.4's
# mod_authz_host); any location can have Require lines

sub get_from ($srv, $from, $path, @headers) {
    my $out = raw_request(
        $srv->port,
        join("\r\n", "GET $path HTTP/1.1", 'Host: x', 'Connection: close', @headers, '', ''),
        from => $from
    );
    return $out =~ m{\AHTTP/1\.1 (\d+)} ? $1 : 'none';
}

subtest 'the rules themselves' => sub {
    my $local = Perennial::Access->parse('local');
    ok(Perennial::Access->allows([$local], $_), "local allows $_")
        for qw(127.0.0.1 127.1.2.3 ::1 ::ffff:127.0.0.1);
    ok(Perennial::Access->allows([$local],  undef), 'local allows a Unix-socket client');
    ok(!Perennial::Access->allows([$local], $_),    "local refuses $_")
        for qw(10.0.0.1 192.168.1.5 2001:db8::1);
    my $nets
        = Perennial::Access->parse(qw(ip 10.1 192.168.0.0/255.255.0.0 2001:db8::/32 172.16.0.0/12));
    ok(Perennial::Access->allows([$nets], $_), "ip allows $_")
        for qw(10.1.200.3 192.168.44.1 2001:db8:1::5 172.31.255.255);
    ok(!Perennial::Access->allows([$nets], $_), "ip refuses $_")
        for qw(10.2.0.1 192.169.0.1 2001:db9::1 172.32.0.1 127.0.0.1);
    ok(Perennial::Access->allows([$nets, $local], '127.0.0.1'), 'several lines: any of them');
    ok(!Perennial::Access->allows([Perennial::Access->parse(qw(all denied))], '127.0.0.1'),
        'all denied');
    like(Perennial::Access->parse(qw(expr %{REMOTE_ADDR})), qr/not supported/, 'expr is refused');
    ok(Perennial::Access->allows([Perennial::Access->parse(qw(host localhost))], '127.0.0.1'),
        'host: the name by forward-confirmed reverse DNS');
    like(Perennial::Access->parse(qw(ip 300.1.1.1)),   qr/not an address/, 'a bad address');
    like(Perennial::Access->parse(qw(ip 10.0.0.0/33)), qr/not an address/, 'a bad prefix');
};

subtest 'a status page answers loopback clients by default' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "<Location /server-status>\n  SetHandler server-status\n</Location>\n"
            . "<Location /perl-status>\n  SetHandler perl-status\n</Location>\n"
    );
    is get_from($srv, '127.0.0.1', '/server-status?auto'), 200, 'server-status from 127.0.0.1';
    is get_from($srv, '127.0.0.2', '/perl-status'),        200, 'perl-status from 127.0.0.2';
    $srv->stop;
};

subtest 'Require ip: other clients get 403 and a log line' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "<Location /server-status>\n  SetHandler server-status\n  Require ip 127.0.0.2\n"
            . "</Location>\n<Location /private>\n  SetHandler psgi\n  PSGIApp "
            . Cwd::abs_path('t/psgi/pid.psgi')
            . "\n  Require ip 127.0.0.3 127.0.0.4\n</Location>\n"
    );
    is get_from($srv, '127.0.0.1', '/server-status'), 403, '127.0.0.1 is refused';
    is get_from($srv, '127.0.0.2', '/server-status'), 200, '127.0.0.2 is let in';
    is get_from($srv, '127.0.0.1', '/private'),       403, 'a PSGI location with Require';
    is get_from($srv, '127.0.0.4', '/private'),       200, 'the second address of the line';
    is get_from($srv, '127.0.0.1', '/'),              200, 'other locations are open';
    like $srv->error_log,
        qr/client 127\.0\.0\.1 denied by Require \(\S+perennial\.conf line \d+\): GET \/server-status/,
        'the refusal is logged with the section';
    $srv->stop;
};

subtest 'the default holds whatever a Directory grants, and a lone PSGI Location keeps its rules' =>
    sub {
    my $docroot = scratch_dir();
    my $srv     = start_server(
        workers => 1,
        conf    => <<"CONF");
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
DocumentRoot $docroot
<Directory $docroot>
    Require all granted
</Directory>
<Location />
    Require all granted
</Location>
<Location /server-status>
    SetHandler server-status
</Location>
<Location /perl-status>
    SetHandler perl-status
</Location>
<LocationMatch ^/perl-status>
    Require all granted
</LocationMatch>
CONF
    is get_from($srv, '127.0.0.1', '/server-status', 'X-Forwarded-For: 192.0.2.9'), 403,
        'a client that is not local is refused, though the document root and a <Location /> '
        . 'written before are granted to all';
    is get_from($srv, '127.0.0.1', '/perl-status', 'X-Forwarded-For: 192.0.2.9'), 200,
        'a section merged after the page\'s own replaces the default, as it would a Require local '
        . 'written there';
    is get_from($srv, '127.0.0.1', '/server-status'), 200, 'the local host still gets it';
    like $srv->error_log, qr/client 192\.0\.2\.9 denied by Require \(Require local by default\)/,
        'and the refusal says why';
    $srv->stop;

    # One <Location /> with a PSGI application is served without the walk: unless it holds
    # anything the walk applies
    $srv = start_server(
        workers => 1,
        conf    => "<Location />\n  SetHandler psgi\n  PSGIApp "
            . Cwd::abs_path('t/psgi/pid.psgi')
            . "\n  Order deny,allow\n  Deny from all\n  Allow from 127.0.0.2\n</Location>\n"
    );
    is get_from($srv, '127.0.0.1', '/'), 403, 'Deny from all in the only section is enforced';
    is get_from($srv, '127.0.0.2', '/'), 200, 'and its Allow from';
    like $srv->error_log, qr/client 127\.0\.0\.1 denied by Order\/Allow\/Deny \(\S+ line \d+\)/,
        'the refusal names the section';
    $srv->stop;
    };

subtest 'configuration errors name the file and line' => sub {
    my ($out, $code) = configtest(
        "<Location /s>\n  SetHandler server-status\n  Require expr true\n</Location>\n"
            . "<Directory /tmp>\n  SetHandler perl-status\n</Directory>\n"
            . "<Location /t>\n  SetHandler server-status\n  Require ip nowhere\n</Location>\n"
            . "<Location /u>\n  <RequireAll>\n    Require not ip 10.1.2.3\n  </RequireAll>\n</Location>\n",
        'bad.conf'
    );
    isnt $code, 0, 'configtest fails';
    like $out, qr/bad\.conf line 3: Require expr is not supported/, 'Require expr';
    like $out,
        qr{bad\.conf line 5: <Directory /tmp>: SetHandler perl-status belongs in a plain <Location>},
        'Directory';
    like $out, qr/bad\.conf line 10: Require ip: 'nowhere' is not an address/, 'bad address';
    like $out, qr/bad\.conf line 13: <RequireAll> holds only negative rules/,
        'a RequireAll that could never grant, as Apache refuses it';
};

done_testing;
