use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir script_modes write_file);
use Perennial::Test::Apache qw(answer_of apache_and_perennial apache_available);

# CGI.pm's import_names puts each request parameter in a variable ($Q::a). Under
# ModPerl::Registry and ModPerl::PerlRun CGI.pm empties the namespace before it imports, so a
# request without the parameter finds nothing; Perennial's worker used to keep the previous
# request's value there (another client's). Each request is asked of Apache and of Perennial
# (one worker, so that the requests follow each other in it), and the answers compared.
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();
my $dir = scratch_dir();
my $cgi = "$dir/cgi";
my $show
    = qq{print "a=", (defined \$Q::a ? \$Q::a : 'none'), " b=", (defined \$Q::b ? \$Q::b : 'none'), "\\n";\n};
write_file(
    "$cgi/method.pl",
    "#!/usr/bin/perl\nuse CGI;\nmy \$q = CGI->new;\n\$q->import_names('Q');\n"
        . "print \$q->header('text/plain');\n$show",
    0755
);

# Imported as a function before the first request in the worker: the copy in the script's package
write_file(
    "$cgi/function.pl",
    "#!/usr/bin/perl\nuse CGI qw(:standard);\nimport_names('Q');\n"
        . "print header('text/plain');\n$show",
    0755
);
system("chmod -R a+rX $dir") == 0 or die;

my $locations = "DocumentRoot $dir\n" . script_modes($cgi);
my ($apid, $aport, $srv) = apache_and_perennial($dir, $locations);

my %expected = ('?a=1' => "a=1 b=none\n", '' => "a=none b=none\n", '?b=2' => "a=none b=2\n");
for my $script (qw(function method)) {
    for my $mode (qw(registry perlrun)) {
        for my $query ('?a=1', '', '?b=2') {
            my @request = (GET => "/$mode/$script.pl$query");
            my $apache  = answer_of($aport, {}, @request);
            is $apache->{body}, $expected{$query}, "mod_perl, /$mode/$script.pl$query";
            is_deeply answer_of($srv->port, {}, @request), $apache, 'Perennial: the same';
        }
    }
}

$srv->stop;
kill TERM => $apid;
done_testing;
