use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving site_files);

# TRACE as Apache answers it under TraceEnable On, its default: the core echoes the request's
# head as message/http, before access rules (a location no one may see included), and no
# script, handler module or file is reached (a missing file neither); a TRACE with a body is
# refused. Each answer is compared
# with Apache's for the same request, on both builds; the scripts leave a file behind if they
# run.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
my $ran = "$dir/ran";
site_files(
    $dir,
    'cgi-bin/t.pl' => "open my \$f, '>>', '$ran/ran' or die; print \$f \"ran\\n\";\n"
        . "print \"Content-Type: text/plain\\n\\nscript ran\\n\";\n",
    'docs/s.txt' => "static\n",
);
mkdir $ran or die "$ran: $!";
chmod 0777, $ran or die;    # The scripts' user writes there if they run
my $conf = <<"CONF";
DocumentRoot $dir/docs
ScriptAlias /cgi-bin/ $dir/cgi-bin/
Alias /registry $dir/cgi-bin
<Location /registry>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
</Location>
<Location /closed>
    Require all denied
</Location>
<Directory $dir>
    Require all granted
    Options +ExecCGI
</Directory>
CONF
my ($apid, $aport) = apache_serving($dir, $conf, qw(authz_core alias cgi mime perl));

my %compared = ('content-type' => 1);
my @asked    = (
    ['/cgi-bin/t.pl',  'X-Test: 1'],
    ['/registry/t.pl', 'X-Test: 1', 'Accept: */*'],
    ['/s.txt'], ['/nothere'], ['/closed/x'],
    ['/cgi-bin/t.pl', 'Content-Type: text/plain', 'a body'],
);
my @want = map { answer_of($aport, \%compared, TRACE => @$_) } @asked;
is_deeply [map { $_->{status} } @want], [200, 200, 200, 200, 200, 413],
    "Apache: every TRACE echoed but the one with a body, a denied location's too";
is $want[0]{body}, "TRACE /cgi-bin/t.pl HTTP/1.0\r\nHost: localhost\r\nX-Test: 1\r\n\r\n",
    'its echo is the head as sent';
ok !-e "$ran/ran", 'and no script ran';

for my $build (qw(C Perl)) {
    local $ENV{PERENNIAL_PURE_PERL} = $build eq 'Perl' ? 1 : undef;
    my $srv = start_server(workers => 1, conf => $conf);
    for my $i (0 .. $#asked) {
        my $got = answer_of($srv->{port}, \%compared, TRACE => @{$asked[$i]});
        $got->{body} = '' if $got->{status} != 200;  # The error pages' words are compared elsewhere
        is_deeply $got, {%{$want[$i]}, $want[$i]{status} != 200 ? (body => '') : ()},
            "$build build: TRACE $asked[$i][0]" . ($asked[$i][-1] =~ /:|\A\// ? '' : ' with a body')
            or diag explain $got;
    }
    ok !-e "$ran/ran", "$build build: no script ran";
    $srv->stop;
}
kill 'TERM', $apid;
waitpid $apid, 0;

done_testing;
