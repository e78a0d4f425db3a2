# What a Registry script under AuthType Basic asks of the request object (Apache2::Access)
use strict;
use warnings;
use Apache2::RequestRec ();
use Apache2::Access     ();
use Apache2::Const -compile => qw(OK);

my $r = shift;
my ($rc, $password) = $r->get_basic_auth_pw;
$r->content_type('text/plain');
print map {"$_\n"} 'auth_type=' . ($r->auth_type // 'undef'),
    'auth_name=' .          ($r->auth_name // 'undef'),
    'some_auth_required=' . ($r->some_auth_required ? 1 : 0),
    'get_basic_auth_pw=' .  ($rc == Apache2::Const::OK ? 'OK' : $rc) . ' ' . ($password // 'undef'),
    'user=' .               ($r->user         // 'undef'),
    'ap_auth_type=' .       ($r->ap_auth_type // 'undef');
