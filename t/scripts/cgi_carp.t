use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(scratch_dir write_file);
use Perennial::Test::Scripts qw(start_script_server);

# CGI::Carp's fatalsToBrowser shows a script's fatal error in the browser under mod_cgi and
# under ModPerl::Registry; a resident script here must show it too, though the executor's own
# eval is around it, and must not for a die inside an eval of the script's own
my $dir = scratch_dir();
write_file("$dir/fatal.pl",
    qq{#!$^X\nuse CGI::Carp qw(fatalsToBrowser);\ndie "broken at the start";\n}, 0755);
write_file("$dir/caught.pl", <<"PL", 0755);
#!$^X
use CGI::Carp qw(fatalsToBrowser);
my \$ok = eval { die "inner\\n"; 1 };
print "Content-Type: text/plain\\n\\ncaught: \$@";
PL
write_file("$dir/handled.pl", <<"PL", 0755);
#!$^X
use CGI::Carp qw(fatalsToBrowser set_die_handler);
set_die_handler(sub { print "the die handler saw: \@_" });
print "Content-Type: text/plain\\n\\ndone\\n";
exit;
PL
write_file("$dir/leaves.pl", <<"PL", 0755);
#!$^X
use CGI::Carp qw(fatalsToBrowser);
print "Content-Type: text/plain\n\ndone\n";
exit;
PL
system("chmod -R a+rX $dir") == 0 or die;
my $srv = start_script_server(dir => $dir);
my %body;

for my $mode (qw(cgi-bin registry perlrun)) {
    my $res = $srv->get("/$mode/fatal.pl");
    is $res->{status}, 500, "/$mode: a fatal error: 500";
    like $res->{content}, qr{<h1>Software error:</h1>\s*<pre>broken at the start at },
        "  with CGI::Carp's page, which shows it";
    $body{$mode} = $res->{content} =~ s{ at \S+ line \d+\.}{}r;
    is $srv->get("/$mode/caught.pl")->{content}, "caught: inner\n",
        "/$mode: a die in the script's own eval is the script's";
    is_deeply [@{$srv->get("/$mode/leaves.pl")}{qw(status content)}], [200, "done\n"],
        "/$mode: an exit is no error";
}
is $body{registry}, $body{'cgi-bin'}, 'Registry\'s page is mod_cgi\'s';
is $body{perlrun},  $body{'cgi-bin'}, 'so is PerlRun\'s';

# Last: CGI::Carp's die handler is a global of its own, which stays for the worker's next scripts
# (as under mod_perl)
for my $mode (qw(cgi-bin registry perlrun)) {
    is $srv->get("/$mode/handled.pl")->{content}, "done\n",
        "/$mode: a die handler does not see an exit, as ModPerl::Util::exit turns it off";
}
$srv->stop;
done_testing;
