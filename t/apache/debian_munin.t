use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(apache_available);
use Perennial::Test::DebianApp;

# Debian's Munin (munin), its HTML pages drawn by /usr/lib/munin/cgi/munin-cgi-html: a
# `while (new CGI::Fast)` accept loop that reads MUNIN_CONFIG once, before the loop, and keeps
# its configuration between turns. Its data is a host the test makes up: a node reached
# through cmd:// (a script on stdin and stdout, so no munin-node runs), polled once by
# munin-update, then munin-limits and munin-html as munin-cron runs them (munin-html writes
# the configuration cache that the CGI reads on every turn after its first); none of them will
# run as root. mod_cgi's pages, and Perennial's in CGI, PerlRun
# and Registry mode (one turn of the loop per request).
my $cgi = '/usr/lib/munin/cgi/munin-cgi-html';
plan skip_all => 'apache2 and munin are not installed (make test installs them)'
    unless apache_available() && -x $cgi && -x '/usr/share/munin/munin-update';
my @munin = getpwnam 'munin';
plan skip_all => 'munin-update runs as the user munin, which this user cannot become'
    if $> == 0 && !@munin;
my $dir = scratch_dir();
mkdir "$dir/$_" or die for qw(db www log run cache);
write_file("$dir/node.pl", <<'NODE', 0755);
#!/usr/bin/perl
# What munin-node would answer for two plugins, always the same values
$| = 1;
my %config = (
    load  => "graph_title Load average\ngraph_vlabel load\ngraph_category system\n"
        . "load.label load\nload.warning 10\n",
    users => "graph_title Logged in users\ngraph_vlabel users\ngraph_category system\n"
        . "tty.label tty\npts.label pts\npts.warning 2\n",
);
my %fetch = (load => "load.value 0.42\n", users => "tty.value 1\npts.value 3\n");
print "# munin node at testhost\n";
while (my $line = <STDIN>) {
    my ($cmd, $arg) = split ' ', $line;
    if    ($cmd eq 'cap')    { print "cap\n" }
    elsif ($cmd eq 'nodes')  { print "testhost\n.\n" }
    elsif ($cmd eq 'list')   { print join(' ', sort keys %config), "\n" }
    elsif ($cmd eq 'config') { print $config{$arg} // '', ".\n" }
    elsif ($cmd eq 'fetch')  { print $fetch{$arg} // '', ".\n" }
    elsif ($cmd eq 'quit')   { exit 0 }
    else                     { print "# Unknown command\n.\n" }
}
NODE
write_file("$dir/munin.conf", <<"CONF");
dbdir     $dir/db
htmldir   $dir/www
logdir    $dir/log
rundir    $dir/run
cgitmpdir $dir/cache
tmpldir   /etc/munin/templates
staticdir /etc/munin/static
graph_strategy cgi
html_strategy cgi
[test;testhost]
    address cmd://$dir/node.pl
    use_node_name yes
CONF
system("chmod -R a+rwX $dir") == 0 or die;
my @as = $> == 0 ? ('runuser', '-u', 'munin', '--') : ();

for my $step (qw(munin-update munin-limits munin-html)) {    # As munin-cron runs them
    system(@as, "/usr/share/munin/$step", '--config', "$dir/munin.conf") == 0
        or BAIL_OUT("$step could not make the data");
}
system("chmod -R a+rwX $dir") == 0 or die;

my $site = Perennial::Test::DebianApp->start(
    dir     => $dir,
    scripts => '/usr/lib/munin/cgi',
    conf    => "SetEnv MUNIN_CONFIG $dir/munin.conf\n",
);
$site->compare(
    [   ['the overview', 'munin-cgi-html/',                shows => qr{href="test/index.html"}],
        ['a group',      'munin-cgi-html/test/index.html', shows => qr/testhost/],
        ['a host',       'munin-cgi-html/test/testhost/index.html', shows => qr/Logged in users/],
        ['a service',    'munin-cgi-html/test/testhost/users.html', shows => qr/pts/],
        ['the problems', 'munin-cgi-html/problems.html',            shows => qr/Warning/],
        ['a category',   'munin-cgi-html/system-day.html',          shows => qr/Load average/],
    ],
    same => sub ($page) { $page =~ s/ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4}/ at TIME/gr }
);
$site->stop;
done_testing;
