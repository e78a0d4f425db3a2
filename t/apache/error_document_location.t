use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving script_site site_files);

# An ErrorDocument page that is a script printing a Location: mod_cgi follows a local one only
# under status 200, and an ErrorDocument's request has its error's status, so the client gets
# that status with the Location and the script's body, under mod_cgi and Registry alike. Each
# answer is compared with Apache's for the same configuration.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
site_files(
    $dir,
    'cgi-bin/local.pl'   => qq{print "Location: /elsewhere.txt\\n\\nmoved here\\n";\n},
    'cgi-bin/away.pl'    => qq{print "Location: http://example.test/away\\n\\ngone away\\n";\n},
    'docs/elsewhere.txt' => "elsewhere\n",
    'docs/closed/x.txt'  => "closed\n",
);
my $conf = script_site($dir) . <<"CONF";
<Location /closed>
    Require all denied
</Location>
<Location /missing-cgi>
    ErrorDocument 404 /cgi-bin/local.pl
</Location>
<Location /missing-registry>
    ErrorDocument 404 /registry/local.pl
</Location>
<Location /closed>
    ErrorDocument 403 /cgi-bin/away.pl
</Location>
CONF
my ($apid, $aport) = apache_serving($dir, $conf, qw(authz_core alias cgi mime perl));
my $srv = start_server(workers => 1, conf => $conf);

my %compared = (location => 1);
for my $path (qw(/missing-cgi/x /missing-registry/x /closed/x.txt)) {
    my $want = answer_of($aport,     \%compared, GET => $path);
    my $got  = answer_of($srv->port, \%compared, GET => $path);
    is_deeply [@$got{qw(status head body)}], [@$want{qw(status head body)}],
        "$path: $want->{status}, @{$want->{head}}, its script's body, as Apache's";
}
is answer_of($aport, {}, GET => '/missing-cgi/x')->{status}, 404,
    'Apache: the error\'s status stays, its Location is not followed';

$srv->stop;
kill 'TERM', $apid;
done_testing;
