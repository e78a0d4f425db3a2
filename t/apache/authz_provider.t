use v5.36;
use lib 't/lib';
use MIME::Base64 qw(encode_base64);
use Test::More;
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(apache_available apache_serving same_access site_files);

# PerlAddAuthzProvider, Apache 2.4's way to write a Require rule in Perl: `Require species
# ...` asks the handler before authentication (no user: it may say AUTHZ_DENIED_NO_USER) and
# after it; a provider that needs no user decides alone; one registered under `user` takes
# mod_authz_user's place (as Apache2_4::AuthCookie's documentation has it); `Require not` turns
# a provider over; a provider that dies is a 500, one that returns undef denies; and a
# PerlAuthenHandler's internal_redirect answers with the other URL. Each answer compared with Apache + mod_perl's.
plan skip_all =>
    'apache2, mod_perl or Apache2_4::AuthCookie is not installed (make test installs them)'
    unless apache_available() && eval { require Apache2_4::AuthCookie; 1 };

my $dir = site_files(scratch_dir(), 'docs/x.txt' => "x\n");
write_file("$dir/lib/Species.pm", <<'PM');
package Species;
use strict;
use warnings;
use Apache2::RequestRec ();
use APR::Table ();
use Apache2_4::AuthCookie ();
use Apache2::SubRequest ();
use Apache2::Const -compile => qw(AUTHZ_GRANTED AUTHZ_DENIED AUTHZ_DENIED_NO_USER DONE);

our @ISA = ('Apache2_4::AuthCookie');    # For its `user` provider, authz_handler

my %SPECIES = (alice => 'klingon', bob => 'human');
sub species {    # Require species klingon vulcan
    my ($r, $wanted) = @_;
    my $user = $r->user;
    return Apache2::Const::AUTHZ_DENIED_NO_USER unless defined $user;
    my %ok = map { ($_ => 1) } split ' ', $wanted;
    return $ok{$SPECIES{$user} // ''} ? Apache2::Const::AUTHZ_GRANTED : Apache2::Const::AUTHZ_DENIED;
}
sub pass {    # Require pass: a header lets in, no user needed
    my ($r) = @_;
    return $r->headers_in->{'X-Pass'} ? Apache2::Const::AUTHZ_GRANTED : Apache2::Const::AUTHZ_DENIED;
}
sub broken  { die "the provider's database is down\n" }
sub nothing { return undef }    # Read as 0, AUTHZ_DENIED
sub onward {    # A PerlAuthenHandler that hands the request to another URL
    my $r = shift;
    $r->internal_redirect('/pass/x.txt');
    return Apache2::Const::DONE;
}
1;
PM
system('htpasswd', '-cbm', "$dir/users", 'alice', 'a-secret') == 0 or die 'htpasswd failed';
system('htpasswd', '-bm',  "$dir/users", 'bob',   'b-secret') == 0 or die 'htpasswd failed';
system('chmod', '-R', 'a+rX', $dir) == 0 or die;
my $basic = "AuthType Basic\n    AuthName Staff\n    AuthUserFile $dir/users";
my $conf  = <<"CONF";
PerlSwitches -I$dir/lib
PerlModule Species
PerlAddAuthzProvider species Species::species
PerlAddAuthzProvider pass Species::pass
PerlAddAuthzProvider broken Species::broken
PerlAddAuthzProvider nothing Species::nothing
PerlAddAuthzProvider user Species->authz_handler
DocumentRoot $dir/docs
@{[ map { "Alias /$_ $dir/docs\n" } qw(klingon pass either named broken notpass nothing onward) ]}<Directory $dir>
    Require all granted
</Directory>
<Location /klingon>
    $basic
    Require species klingon vulcan
</Location>
<Location /pass>
    Require pass
</Location>
<Location /either>
    $basic
    Require pass
    Require species human
</Location>
<Location /named>
    $basic
    Require user bob
</Location>
<Location /broken>
    Require broken
</Location>
<Location /notpass>
    <RequireAll>
        Require all granted
        Require not pass
    </RequireAll>
</Location>
<Location /nothing>
    Require nothing
</Location>
<Location /onward>
    $basic
    PerlAuthenHandler Species::onward
    Require valid-user
</Location>
CONF
my ($apid, $aport)
    = apache_serving($dir, $conf,
    qw(authz_core authz_user authn_core authn_file auth_basic alias mime perl));
my $srv = start_server(workers => 1, conf => $conf);

my %who = (
    nobody => [],
    alice  => ['Authorization: Basic ' . encode_base64('alice:a-secret', '')],
    bob    => ['Authorization: Basic ' . encode_base64('bob:b-secret',   '')],
    pass   => ['X-Pass: 1'],
);
same_access($aport, $srv->port,
    [map {"$_/x.txt"} qw(/klingon /pass /either /named /broken /notpass /nothing /onward)], \%who);
like $srv->error_log, qr/PerlAddAuthzProvider broken failed: the provider's database is down/,
    'the provider that died is in the error log, with why';

$srv->stop;
kill 'TERM', $apid;
done_testing;
