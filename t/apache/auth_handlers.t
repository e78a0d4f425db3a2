use v5.36;
use lib 't/lib';
use MIME::Base64 qw(encode_base64);
use Test::More;
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving site_files);

# Access decided by mod_perl handlers, as Apache 2.4 + mod_perl decides it: a user that a
# handler before authentication set (a single sign-on header) meets Require valid-user; with
# Satisfy Any, an access handler's refusal leaves the decision to authentication, and its OK
# needs no user; a variable a handler sets meets Require env; an AuthType
# of a handler's own (Apache2::AuthCookie's way) with its PerlAuthenHandler and
# PerlAuthzHandler; and what such handlers set reaching a mod_cgi or Registry script. Each answer is
# compared with Apache's.
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $dir = scratch_dir();
site_files($dir, 'cgi/who.pl' => <<'PL');
print "Content-Type: text/plain\n\n";
print join(' ', map { "$_=" . ($ENV{$_} // '-') }
    qw(REMOTE_USER AUTH_TYPE GATE REDIRECT_REMOTE_USER REDIRECT_GATE)), "\n";
PL
write_file("$dir/lib/Gate.pm", <<'PM');
package Gate;
use strict;
use warnings;
use Apache2::RequestRec ();
use Apache2::RequestIO ();
use Apache2::RequestUtil ();
use Apache2::Access ();
use Apache2::SubRequest ();
use APR::Table ();
use Apache2::Const -compile => qw(OK DECLINED FORBIDDEN);

sub sso {    # A front end's single sign-on header names the user
    my $r = shift;
    my $user = $r->headers_in->{'X-SSO'};
    $r->user($user) if $user;
    return Apache2::Const::OK;
}
sub peek {    # Reads the Basic credentials and checks nothing: the user is the client's word
    my $r = shift;
    my ($rc, $password) = $r->get_basic_auth_pw;
    return Apache2::Const::OK;
}
sub onward {    # A handler that passes the request to a script elsewhere
    my $r = shift;
    $r->internal_redirect('/open-cgi/who.pl');
    return Apache2::Const::OK;
}
sub deny  { return Apache2::Const::FORBIDDEN }
sub allow { return Apache2::Const::OK }
sub trust {    # A front end's header marks the request trusted, for Require env
    my $r = shift;
    $r->subprocess_env(TRUSTED => 'yes') if $r->headers_in->{'X-Trusted'};
    return Apache2::Const::OK;
}
sub cookie {    # AuthType Gate: the user a cookie names, as Apache2::AuthCookie sets it
    my $r = shift;
    my ($user) = ($r->headers_in->{Cookie} // '') =~ /\bgate=(\w+)/;
    return Apache2::Const::FORBIDDEN unless $user;
    $r->user($user);
    $r->ap_auth_type($r->auth_type) if $user ne 'plain';
    return Apache2::Const::OK;
}
sub authz {
    my $r = shift;
    return $r->user eq 'mallory' ? Apache2::Const::FORBIDDEN : Apache2::Const::OK;
}
sub env {
    my $r = shift;
    $r->subprocess_env(GATE => 'fixup');
    return Apache2::Const::OK;
}
sub show {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print('user=', $r->user // '-', ' type=', $r->ap_auth_type // '-', "\n");
    return Apache2::Const::OK;
}
1;
PM
system('htpasswd', '-cbm', "$dir/users", 'alice', 'secret') == 0 or die 'htpasswd failed';
system('chmod', '-R', 'a+rX', $dir) == 0 or die;
my $staff
    = "AuthType Basic\n    AuthName Staff\n    AuthUserFile $dir/users\n    Require valid-user";
my $shown = "SetHandler modperl\n    PerlResponseHandler Gate::show";
my $conf  = <<"CONF";
PerlSwitches -I$dir/lib
PerlModule Gate
<Directory $dir>
    Require all granted
    Options +ExecCGI
</Directory>
Alias /sso-cgi/ $dir/cgi/
Alias /cookie-cgi/ $dir/cgi/
Alias /sso-registry/ $dir/cgi/
Alias /open-cgi/ $dir/cgi/
Alias /refused/ $dir/cgi/
<Location /open-cgi/>
    SetHandler cgi-script
</Location>
<Location /peek-early>
    $shown
    PerlHeaderParserHandler Gate::peek
    $staff
</Location>
<Location /peek-access>
    $shown
    PerlAccessHandler Gate::peek
    $staff
</Location>
<Location /onward>
    SetHandler modperl
    PerlResponseHandler Gate::onward
    PerlHeaderParserHandler Gate::sso
    PerlFixupHandler Gate::env
    Require valid-user
</Location>
<Location /refused/>
    SetHandler cgi-script
    PerlHeaderParserHandler Gate::env
    PerlAccessHandler Gate::deny
    ErrorDocument 403 /open-cgi/who.pl
</Location>
<Location /sso>
    $shown
    PerlHeaderParserHandler Gate::sso
    Require valid-user
</Location>
<Location /sso-basic>
    $shown
    PerlHeaderParserHandler Gate::sso
    AuthType Basic
    AuthName Staff
    Require valid-user
</Location>
<Location /any>
    $shown
    Satisfy Any
    PerlAccessHandler Gate::deny
    $staff
</Location>
<Location /any-ok>
    $shown
    Satisfy Any
    PerlAccessHandler Gate::allow
    $staff
</Location>
<Location /all>
    $shown
    PerlAccessHandler Gate::deny
    $staff
</Location>
<Location /trusted>
    $shown
    PerlHeaderParserHandler Gate::trust
    Require env TRUSTED
</Location>
<Location /cookie>
    $shown
    AuthType Gate
    AuthName Gate
    PerlAuthenHandler Gate::cookie
    PerlAuthzHandler Gate::authz
    Require valid-user
</Location>
<Location /sso-cgi/>
    SetHandler cgi-script
    PerlHeaderParserHandler Gate::sso
    PerlFixupHandler Gate::env
    Require valid-user
</Location>
<Location /sso-registry/>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
    PerlHeaderParserHandler Gate::sso
    PerlFixupHandler Gate::env
    Require valid-user
</Location>
<Location /cookie-cgi/>
    SetHandler cgi-script
    AuthType Gate
    AuthName Gate
    PerlAuthenHandler Gate::cookie
    Require valid-user
</Location>
CONF
my ($apid, $aport) = apache_serving($dir, $conf,
    qw(authz_core authz_host authz_user authn_core authn_file auth_basic access_compat alias mime cgi perl)
);
my $srv = start_server(workers => 1, conf => $conf);

my %compared = ('www-authenticate' => 1);
my $basic    = 'Authorization: Basic ' . encode_base64('alice:secret', '');
for my $ask (
    ['/sso'],
    ['/sso', 'X-SSO: alice'],
    ['/sso-basic'],
    ['/sso-basic', 'X-SSO: alice'],
    ['/sso-basic', $basic],
    ['/any'],
    ['/any', $basic],
    ['/any', 'Authorization: Basic ' . encode_base64('alice:wrong', '')],
    ['/any-ok'],
    ['/all', $basic],
    ['/trusted'],
    ['/trusted', 'X-Trusted: 1'],
    ['/cookie'],
    ['/cookie',              'Cookie: gate=bob'],
    ['/cookie',              'Cookie: gate=mallory'],
    ['/cookie',              'Cookie: gate=plain'],
    ['/sso-cgi/who.pl',      'X-SSO: carol'],
    ['/sso-registry/who.pl', 'X-SSO: carol'],
    ['/cookie-cgi/who.pl',   'Cookie: gate=bob'],
    ['/cookie-cgi/who.pl',   'Cookie: gate=plain'],
    ['/peek-early',          'Authorization: Basic ' . encode_base64('admin:nopw', '')],
    ['/peek-access',         'Authorization: Basic ' . encode_base64('admin:nopw', '')],
    ['/peek-early',          $basic],
    (map { ['/onward', 'X-SSO: carol'] } 1, 2),    # The second on the plan kept for the first
    (map { ['/refused/who.pl'] } 1, 2),
    )
{
    my $want = answer_of($aport,     \%compared, GET => @$ask);
    my $got  = answer_of($srv->port, \%compared, GET => @$ask);
    my @kept
        = $want->{status} == 200 || $ask->[0] =~ /refused/ ? qw(status head body) : qw(status head);
    is_deeply [@$got{@kept}], [@$want{@kept}],
          "@$ask: $want->{status} "
        . ($want->{status} == 200 ? $want->{body} =~ s/\n//r : "@{$want->{head}}")
        . ', as Apache';
}

$srv->stop;
kill 'TERM', $apid;
done_testing;
