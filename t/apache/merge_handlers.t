use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving site_files);

# mod_perl's handler lists, as Apache + mod_perl runs them: a section's PerlAccessHandler
# replaces the one it inherits, unless PerlOptions +MergeHandlers (in it, or inherited) adds it
# to them, so that a server-wide access handler still runs there; and a handler may set the
# connection's client address for the handlers after it. Each answer is compared with Apache's.
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $dir = scratch_dir();
site_files($dir, 'docs/x.txt' => "x\n", 'docs/fixed/y.txt' => "y\n");
write_file("$dir/lib/Trail.pm", <<'PM');
package Trail;
use strict;
use warnings;
use Apache2::RequestRec ();
use Apache2::RequestIO ();
use Apache2::Connection ();
use Apache2::RequestUtil ();
use APR::Table ();
use Apache2::Const -compile => qw(OK FORBIDDEN);

sub mark { my ($r, $name) = @_; $r->pnotes(trail => [@{$r->pnotes('trail') || []}, $name]) }
sub a { my $r = shift; mark($r, 'A'); return Apache2::Const::OK }
sub b { my $r = shift; mark($r, 'B'); return Apache2::Const::OK }
sub no_ten {    # The server-wide rule: a client whose address a handler set to 10.* is refused
    my $r = shift;
    mark($r, 'guard');
    return $r->connection->client_ip =~ /\A10\./ ? Apache2::Const::FORBIDDEN : Apache2::Const::OK;
}
sub real_ip {
    my $r = shift;
    my $ip = $r->headers_in->{'X-Real-IP'};
    $r->connection->client_ip($ip) if $ip;
    return Apache2::Const::OK;
}
sub tables {    # A fixup's headers: Cache-Control with a 2xx or 3xx, X-Fix with any answer
    my $r = shift;
    $r->headers_out->set('Cache-Control' => 'private');
    $r->err_headers_out->set('X-Fix' => '1');
    return Apache2::Const::OK;
}
sub show {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print(join(',', @{$r->pnotes('trail') || []}), ' ', $r->connection->client_ip, "\n");
    return Apache2::Const::OK;
}
1;
PM
system('chmod', '-R', 'a+rX', $dir) == 0 or die;
my $conf = <<"CONF";
PerlSwitches -I$dir/lib
PerlModule Trail
DocumentRoot $dir/docs
<Directory $dir>
    Require all granted
</Directory>
PerlPostReadRequestHandler Trail::real_ip
PerlAccessHandler Trail::no_ten
<Location /replaced>
    SetHandler modperl
    PerlResponseHandler Trail::show
    PerlAccessHandler Trail::a
</Location>
<Location /merged>
    SetHandler modperl
    PerlResponseHandler Trail::show
    PerlOptions +MergeHandlers
    PerlAccessHandler Trail::a Trail::b
</Location>
<Location /fixed>
    PerlFixupHandler Trail::tables
</Location>
<Location /merged/inner>
    PerlAccessHandler Trail::b
</Location>
CONF
my ($apid, $aport) = apache_serving($dir, $conf, qw(authz_core alias mime perl));
my $srv = start_server(workers => 1, conf => $conf);

for my $ask (
    ['/replaced'], ['/merged'], ['/merged/inner'],
    ['/merged',   'X-Real-IP: 10.1.2.3'],
    ['/replaced', 'X-Real-IP: 10.1.2.3'],
    ['/x.txt',    'X-Real-IP: 10.1.2.3'],
    )
{
    my $want = answer_of($aport,     {}, GET => @$ask);
    my $got  = answer_of($srv->port, {}, GET => @$ask);
    is_deeply [@$got{qw(status body)}], [@$want{qw(status body)}],
          "@$ask: $want->{status} "
        . ($want->{status} == 200 ? $want->{body} =~ s/\n//r : '')
        . ', as Apache';
}

# A fixup handler's tables on a file Perennial serves, and on its 404
my %compared = ('cache-control' => 1, 'x-fix' => 1);
for my $path ('/fixed/y.txt', '/fixed/none.txt') {
    my $want = answer_of($aport, \%compared, GET => $path);
    is_deeply answer_of($srv->port, \%compared, GET => $path)->{head}, $want->{head},
        "$path ($want->{status}): a fixup handler's @{$want->{head}}, as Apache sends them";
}

$srv->stop;
kill 'TERM', $apid;
done_testing;
