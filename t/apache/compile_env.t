use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir script_modes write_file);
use Perennial::Test::Apache qw(answer_of apache_and_perennial apache_available);

# What a script's compile sees in %ENV: under mod_perl the CGI variables are set up before the
# handler compiles the script, so a BEGIN block, or `use lib "$ENV{DOCUMENT_ROOT}/lib"`, reads
# the request's own. Each script is asked of Apache's ModPerl::Registry and ModPerl::PerlRun
# and of Perennial's, and the answers compared. (Perennial used to compile first and set %ENV
# after: the first compile in a worker saw no CGI variables, and a PerlRun compile saw the
# previous request's, another client's query string and cookies included.)
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();
my $dir = scratch_dir();
my $cgi = "$dir/cgi";
write_file("$cgi/seen.pl", <<'PL', 0755);
#!/usr/bin/perl
our $seen;
BEGIN { $seen = join ' ', map { "$_=" . ($ENV{$_} // 'unset') } qw(QUERY_STRING HTTP_X_WHO GATEWAY_INTERFACE) }
print "Content-Type: text/plain\n\n$seen\n";
PL
write_file("$dir/lib/Site/Greeting.pm",
    "package Site::Greeting;\nsub text { 'hello from the site library' }\n1;\n");
write_file("$cgi/uses_root.pl", <<'PL', 0755);
#!/usr/bin/perl
use lib "$ENV{DOCUMENT_ROOT}/lib";
use Site::Greeting;
print "Content-Type: text/plain\n\n", Site::Greeting::text(), "\n";
PL
system("chmod -R a+rX $dir") == 0 or die;

my $locations = "DocumentRoot $dir\n" . script_modes($cgi);
my ($apid, $aport, $srv) = apache_and_perennial($dir, $locations);

my @asked = map { [$_, "X-Who: client $_"] } qw(one two three);
for my $mode (qw(perlrun registry)) {

    # First in the worker: no request before it has left its variables in %ENV
    my $apache = answer_of($aport, {}, GET => "/$mode/uses_root.pl");
    is_deeply [@$apache{qw(status body)}], [200, "hello from the site library\n"],
        "mod_perl, /$mode: use lib \"\$ENV{DOCUMENT_ROOT}/lib\" finds the library";
    is_deeply answer_of($srv->port, {}, GET => "/$mode/uses_root.pl"), $apache,
        "Perennial, /$mode: the same";

    # Registry compiles once per process (Apache's children are several): the first answer only
    for my $ask ($mode eq 'perlrun' ? @asked : $asked[0]) {
        my ($query, $who) = @$ask;
        my @request = (GET => "/$mode/seen.pl?$query", $who);
        my $apache  = answer_of($aport, {}, @request);
        is $apache->{body},
            "QUERY_STRING=$query HTTP_X_WHO=client $query GATEWAY_INTERFACE=CGI/1.1\n",
            "mod_perl, /$mode: the compile sees the request's variables";
        is_deeply answer_of($srv->port, {}, @request), $apache,
            "Perennial, /$mode?$query: the same";
    }
}

# A compile that fails leaves no put for its request to the next one: the next run of a kept
# script still sets its own variables
write_file("$cgi/broken.pl", "#!/usr/bin/perl\nBEGIN { \$x = \$ENV{QUERY_STRING} }\n}\n", 0755);
write_file("$cgi/plain.pl",
    qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\n\$ENV{QUERY_STRING}\\n";\n}, 0755);
system("chmod -R a+rX $dir") == 0 or die;
is $srv->get('/registry/plain.pl?first')->{content},  "first\n", 'a kept script';
is $srv->get('/registry/broken.pl?broken')->{status}, 500,       'a script that does not compile';
is $srv->get('/registry/plain.pl?after')->{content}, "after\n",
    'the kept script after it: its own request\'s variables';

$srv->stop;
kill TERM => $apid;
done_testing;
