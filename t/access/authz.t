use v5.36;
use lib 't/lib';
use Test::More;
use MIME::Base64    qw(encode_base64);
use Perennial::Test qw(raw_request scratch_dir start_server wait_until write_file);

# Apache 2.4's access control beyond single Require lines: <RequireAll>, <RequireAny>,
# <RequireNone>, Require env and host, the 2.2 forms Order/Allow/Deny/Satisfy, and Basic
# authentication against an htpasswd file that Debian's htpasswd wrote
my $dir = scratch_dir();
mkdir "$dir/cgi" or die $!;
write_file("$dir/cgi/who.pl", <<'PL', 0755);
#!/usr/bin/perl
print "Content-Type: text/plain\n\n", ($ENV{REMOTE_USER} // '-'), " ", ($ENV{AUTH_TYPE} // '-'), "\n";
PL
system('htpasswd', '-cbm', "$dir/users", 'alice', 'apr1-secret') == 0   or die 'htpasswd failed';
system('htpasswd', '-bB',  "$dir/users", 'bob',   'bcrypt-secret') == 0 or die 'htpasswd failed';
system('htpasswd', '-bs',  "$dir/users", 'carol', 'sha-secret') == 0    or die 'htpasswd failed';
chmod 0644, "$dir/users";
system('cp', "$dir/users", "$dir/root-only-users") == 0 or die;
chmod 0600, "$dir/root-only-users";    # Workers that gave up root cannot read it
write_file("$dir/cgi/auth.pl", <<'PL', 0755);
#!/usr/bin/perl
print "Content-Type: text/plain\n\n", (defined $ENV{HTTP_AUTHORIZATION} ? 'passed' : 'kept'), "\n";
PL

my $srv = start_server(workers => 1, conf => <<"CONF");
ScriptAlias /cgi/ $dir/cgi/
Alias /all $dir/cgi
Alias /none $dir/cgi
Alias /compat $dir/cgi
Alias /compat2 $dir/cgi
Alias /auth $dir/cgi
Alias /either $dir/cgi
Alias /env $dir/cgi
Alias /setenv $dir/cgi
Alias /host $dir/cgi
Alias /header $dir/cgi
Alias /locked $dir/cgi
Alias /passauth $dir/cgi
Alias /prompt $dir/cgi
<Directory $dir/cgi>
    SetHandler cgi-script
    Options +ExecCGI
</Directory>
<Location /all>
    <RequireAll>
        Require ip 127.0.0.0/8
        Require not ip 127.0.0.2
    </RequireAll>
</Location>
<Location /none>
    <RequireAll>
        Require all granted
        <RequireNone>
            Require ip 127.0.0.3
        </RequireNone>
    </RequireAll>
</Location>
<Location /compat>
    Order deny,allow
    Deny from all
    Allow from 127.0.0.2
</Location>
<Location /compat2>
    Order allow,deny
    Allow from all
    Deny from 127.0.0.2
</Location>
<Location /auth>
    AuthType Basic
    AuthName "Staff only"
    AuthUserFile $dir/users
    Require valid-user
</Location>
<Location /either>
    AuthType Basic
    AuthName "Either"
    AuthUserFile $dir/users
    Require user bob
    Order deny,allow
    Deny from all
    Allow from 127.0.0.2
    Satisfy Any
</Location>
<Location /env>
    SetEnvIf Request_Method ^GET\$ LET_IN
    Require env LET_IN
</Location>
<Location /setenv>
    SetEnv LET_IN 1
    Require env LET_IN
</Location>
<Location /header>
    Require env HTTP_X_LET_IN
</Location>
<Location /locked>
    AuthType Basic
    AuthName "Locked"
    AuthUserFile $dir/root-only-users
    Require valid-user
</Location>
<Location /passauth>
    AuthType Basic
    AuthName "Staff only"
    AuthUserFile $dir/users
    Require valid-user
    CGIPassAuth On
</Location>
<Location /prompt>
    AuthType Basic
    AuthName "Prompt"
    AuthUserFile $dir/users
    Require valid-user
    ErrorDocument 401 "Please log in"
</Location>
<Location /host>
    Require host localhost
</Location>
CONF

sub status ($path, $from = '127.0.0.1', %h) {
    my $head   = join '', map {"$_: $h{$_}\r\n"} sort keys %h;
    my $out    = raw_request($srv->port, "GET $path HTTP/1.0\r\n${head}\r\n", from => $from);
    my ($s)    = $out =~ m{\AHTTP/1\.\d (\d+)};
    my ($body) = $out =~ /\r\n\r\n(.*)\z/s;
    return wantarray ? ($s, $out, $body) : $s;
}
sub basic ($user, $pw) { (Authorization => 'Basic ' . encode_base64("$user:$pw", '')) }

subtest 'RequireAll, RequireNone and Require not' => sub {
    is status('/all/who.pl', '127.0.0.1'),  200, 'in the network and not the excluded address';
    is status('/all/who.pl', '127.0.0.2'),  403, 'the excluded address';
    is status('/none/who.pl', '127.0.0.1'), 200, 'RequireNone: not named';
    is status('/none/who.pl', '127.0.0.3'), 403, 'RequireNone: named';
    is status('/env/who.pl'),               200, 'Require env: a SetEnvIf variable';
    is status('/setenv/who.pl'),            403, 'not a SetEnv one: mod_env sets it after access';
    is status('/host/who.pl'),              200, 'Require host: 127.0.0.1 is localhost, both ways';
};

subtest 'Order, Allow and Deny, as mod_access_compat' => sub {
    is status('/compat/who.pl',  '127.0.0.2'), 200, 'Deny,Allow: allowed';
    is status('/compat/who.pl',  '127.0.0.1'), 403, 'Deny,Allow: denied';
    is status('/compat2/who.pl', '127.0.0.1'), 200, 'Allow,Deny: allowed';
    is status('/compat2/who.pl', '127.0.0.2'), 403, 'Allow,Deny: denied';
    like $srv->error_log,
        qr{client 127\.0\.0\.1 denied by Order/Allow/Deny \(\S+ line \d+\): GET /compat/who\.pl},
        'the refusal is logged with its section';
};

subtest 'Basic authentication with the hashes of Debian\'s htpasswd' => sub {
    my ($s, $out) = status('/auth/who.pl');
    is $s, 401, 'no credentials: 401';
    like $out, qr/^WWW-Authenticate: Basic realm="Staff only"\r$/m, 'with the realm';
    my $body;
    ($s, undef, $body) = status('/auth/who.pl', '127.0.0.1', basic(alice => 'apr1-secret'));
    is_deeply [$s, $body], [200, "alice Basic\n"],
        '$apr1$ (the default): REMOTE_USER and AUTH_TYPE reach the script';
    is status('/auth/who.pl', '127.0.0.1', basic(bob    => 'bcrypt-secret')), 200, 'bcrypt (-B)';
    is status('/auth/who.pl', '127.0.0.1', basic(carol  => 'sha-secret')),    200, '{SHA} (-s)';
    is status('/auth/who.pl', '127.0.0.1', basic(alice  => 'wrong')), 401, 'a wrong password: 401';
    is status('/auth/who.pl', '127.0.0.1', basic(nobody => 'x')),     401, 'an unknown user: 401';
    like $srv->error_log,
        qr/authentication failed \(user alice: password mismatch\): GET \/auth\/who\.pl/,
        'the failure is logged, without the password';
    unlike $srv->error_log, qr/wrong/, 'never the password itself';
    ok wait_until(sub { $srv->access_log =~ m{ - alice \[.*"GET /auth/who\.pl HTTP/1\.0" 200 } },
        5, 'log'),
        'the access log has the user';
};

subtest 'what the client cannot decide, and what the server keeps' => sub {
    is status('/header/who.pl', '127.0.0.1', 'X-Let-In' => 1), 403,
        'Require env: a request header is no variable of the server\'s';
    is status('/locked/who.pl', '127.0.0.1', basic(alice => 'apr1-secret')), 500,
        'an AuthUserFile the server cannot read is its error (500), as in Apache, not a prompt';
    like $srv->error_log, qr/\[error\] Can't read AuthUserFile \S+root-only-users/, 'logged as one';
    my (undef, undef, $kept) = status('/auth/auth.pl', '127.0.0.1', basic(alice => 'apr1-secret'));
    is $kept, "kept\n", 'the Authorization header is kept from CGI scripts, as mod_cgi';
    my (undef, undef, $passed)
        = status('/passauth/auth.pl', '127.0.0.1', basic(alice => 'apr1-secret'));
    is $passed, "passed\n", 'unless CGIPassAuth is On';
    my ($s, $out, $body) = status('/prompt/who.pl');
    is_deeply [$s, $body], [401, 'Please log in'], 'an ErrorDocument for 401';
    like $out, qr/^WWW-Authenticate: Basic realm="Prompt"\r$/m, 'still asks for the password';
};

subtest 'Satisfy Any: the address or the user' => sub {
    is status('/either/who.pl', '127.0.0.2'), 200, 'an allowed address needs no credentials';
    is status('/either/who.pl', '127.0.0.1'), 401, 'another address must log in';
    is status('/either/who.pl', '127.0.0.1', basic(bob => 'bcrypt-secret')), 200,
        'as the user named';
    is status('/either/who.pl', '127.0.0.1', basic(alice => 'apr1-secret')), 401,
        'not another user';
};
$srv->stop;

done_testing;
