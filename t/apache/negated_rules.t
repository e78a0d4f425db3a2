use v5.36;
use lib 't/lib';
use MIME::Base64 qw(encode_base64);
use Test::More;
use Perennial::Test         qw(scratch_dir start_server);
use Perennial::Test::Apache qw(apache_available apache_serving same_access site_files);

# Negated rules as mod_authz_core decides them: `Require not user` and `not valid-user` inside
# <RequireAll>, and <RequireNone> with a user in it. A negated rule never grants: what it does
# not refuse is neutral, and a neutral rule (a negated one that has no user to look at among
# them) asks for no password. Each answer compared with Apache's.
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $dir = site_files(scratch_dir(), 'docs/x.txt' => "x\n");
system('htpasswd', '-cbm', "$dir/users", 'alice', 'a-secret') == 0 or die 'htpasswd failed';
system('htpasswd', '-bm',  "$dir/users", 'bob',   'b-secret') == 0 or die 'htpasswd failed';
chmod 0644, "$dir/users" or die "$dir/users: $!";
my $basic = "AuthType Basic\n    AuthName Staff\n    AuthUserFile $dir/users";
my $conf  = <<"CONF";
DocumentRoot $dir/docs
@{[ map { "Alias /$_ $dir/docs\n" } qw(not-bob local-not-bob local-none-bob local-not-valid user-none-local none-local) ]}<Directory $dir>
    Require all granted
</Directory>
<Location /not-bob>
    $basic
    <RequireAll>
        Require valid-user
        Require not user bob
    </RequireAll>
</Location>
<Location /local-not-bob>
    $basic
    <RequireAll>
        Require ip 127.0.0.1
        Require not user bob
    </RequireAll>
</Location>
<Location /local-none-bob>
    $basic
    <RequireAll>
        Require ip 127.0.0.1
        <RequireNone>
            Require user bob
        </RequireNone>
    </RequireAll>
</Location>
<Location /local-not-valid>
    $basic
    <RequireAll>
        Require ip 127.0.0.1
        Require not valid-user
    </RequireAll>
</Location>
<Location /user-none-local>
    $basic
    <RequireAll>
        Require user alice bob
        <RequireNone>
            Require ip 10.0.0.0/8
            Require user bob
        </RequireNone>
    </RequireAll>
</Location>
<Location /none-local>
    <RequireAll>
        Require all granted
        <RequireNone>
            Require ip 127.0.0.1
        </RequireNone>
    </RequireAll>
</Location>
CONF
my ($apid, $aport)
    = apache_serving($dir, $conf,
    qw(authz_core authz_host authz_user authn_core authn_file auth_basic alias mime));
my $srv = start_server(workers => 1, conf => $conf);

my %who = (
    nobody => [],
    alice  => ['Authorization: Basic ' . encode_base64('alice:a-secret', '')],
    bob    => ['Authorization: Basic ' . encode_base64('bob:b-secret',   '')],
);
same_access(
    $aport,
    $srv->port,
    [   map {"$_/x.txt"}
            qw(/not-bob /local-not-bob /local-none-bob /local-not-valid /user-none-local
            /none-local)
    ],
    \%who
);

$srv->stop;
kill 'TERM', $apid;
done_testing;
