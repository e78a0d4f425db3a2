use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving site_files);

# Apache2_4::AuthCookie (Debian's libapache2-authcookie-perl), the login form of many mod_perl
# sites, unchanged under Apache + mod_perl and under Perennial with one configuration: a
# protected page answers with the login form (its custom_response, a Registry script that
# reads the first request through $r->prev), the form's POST sets the cookie and redirects, the
# cookie then lets the client in, and a wrong password or a forged cookie gets the form again
# with the reason. Each answer compared with Apache's.
plan skip_all =>
    'apache2, mod_perl or Apache2_4::AuthCookie is not installed (make test installs them)'
    unless apache_available() && eval { require Apache2_4::AuthCookie; 1 };

my $dir = site_files(
    scratch_dir(),
    'docs/private/x.txt' => "the protected page\n",
    'docs/login.pl'      => <<'PL');
use strict;
my $r    = shift;
my $prev = $r->prev;
$r->content_type('text/html');
print '<form method="POST" action="/LOGIN">', "\n",
    'reason: ',      ($prev->subprocess_env('AuthCookieReason') // 'none'), "\n",
    'destination: ', $prev->uri, "\n",
    '<input type="hidden" name="destination" value="', $prev->uri, '">', "\n</form>\n";
PL
write_file("$dir/lib/Gate/Cookie.pm", <<'PM');
package Gate::Cookie;
use strict;
use warnings;
use Apache2_4::AuthCookie ();
use Apache2::RequestIO ();    # AuthCookie reads the form with $r->read, as a site's startup loads
our @ISA = ('Apache2_4::AuthCookie');

# The session key is the user and a mark; a real site would keep a session
sub authen_cred {
    my ($self, $r, $user, $password) = @_;
    return $password eq 'secret' ? "$user:ok" : undef;
}
sub authen_ses_key {
    my ($self, $r, $key) = @_;
    my ($user, $mark) = split /:/, $key // '';
    return defined $mark && $mark eq 'ok' ? $user : undef;
}
1;
PM
system('chmod', '-R', 'a+rX', $dir) == 0 or die;
my $conf = <<"CONF";
PerlSwitches -I$dir/lib
PerlModule Gate::Cookie
PerlSetVar GatePath /
PerlSetVar GateLoginScript /login.pl
DocumentRoot $dir/docs
<Directory $dir>
    Require all granted
</Directory>
<Location /login.pl>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
    Options +ExecCGI
</Location>
<Location /private>
    AuthType Gate::Cookie
    AuthName Gate
    PerlAuthenHandler Gate::Cookie->authenticate
    Require valid-user
</Location>
<Location /LOGIN>
    AuthType Gate::Cookie
    AuthName Gate
    SetHandler perl-script
    PerlResponseHandler Gate::Cookie->login
</Location>
CONF
my ($apid, $aport)
    = apache_serving($dir, $conf, qw(authz_core authz_user authn_core alias mime perl));
my $srv = start_server(workers => 1, conf => $conf);

my %compared = map { ($_ => 1) } qw(location set-cookie content-type);
my $form     = 'Content-Type: application/x-www-form-urlencoded';
for my $ask (    # The status and body the flow expects, then the request
    [403, qr/reason: no_cookie/, GET => '/private/x.txt'],
    [   302, qr/\A(?!.*reason)/s,
        POST => '/LOGIN',
        $form,
        'destination=/private/x.txt&credential_0=alice&credential_1=secret'
    ],
    [   200, qr/\Athe protected page\n\z/,
        GET => '/private/x.txt',
        'Cookie: Gate::Cookie_Gate=alice:ok'
    ],
    [   403, qr/reason: bad_credentials/,
        POST => '/LOGIN',
        $form,
        'destination=/private/x.txt&credential_0=alice&credential_1=wrong'
    ],
    [   403, qr/reason: bad_cookie/,
        GET => '/private/x.txt',
        'Cookie: Gate::Cookie_Gate=alice:forged'
    ],
    )
{
    my ($status, $body, @request) = @$ask;
    my $want = answer_of($aport,     \%compared, @request);
    my $got  = answer_of($srv->port, \%compared, @request);
    is $want->{status}, $status, "@request[0, 1]: Apache answers $status";
    like $want->{body}, $body, '  with the body the flow has there';
    is_deeply $got, $want, "  Perennial's is the same: $want->{status} @{$want->{head}}"
        or diag 'Perennial: ', $srv->error_log =~ /([^\n]*\[error\][^\n]*)/g;
}

$srv->stop;
kill 'TERM', $apid;
done_testing;
