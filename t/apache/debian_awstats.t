use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(apache_available);
use Perennial::Test::DebianApp;

# Debian's AWStats (awstats), from /usr/lib/cgi-bin/awstats.pl: a script of 690 KB with
# hundreds of `use vars` globals, its own query-string parsing and a library of files with no
# package line of their own, over statistics the test makes from a log it writes (awstats.pl
# -update). Its configuration directory comes from the query (configdir=), which it allows only
# under AWSTATS_ENABLE_CONFIG_DIR, set by SetEnv. mod_cgi's pages, and Perennial's in CGI,
# PerlRun and Registry mode.
my $awstats = '/usr/lib/cgi-bin/awstats.pl';
plan skip_all => 'apache2 and awstats are not installed (make test installs them)'
    unless apache_available() && -x $awstats;
my $dir = scratch_dir();

# A month of a small site, each host, page and browser with its own count: rows that tie
# would come in hash order, which differs from one process to the next
my @visits = (
    [   '127.0.0.1', '10/Jan/2024:08', '/', 200, '-',
        'Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0', 5
    ],
    [   '127.0.0.2', '11/Jan/2024:09', '/about.html', 200, 'http://example.org/',
        'Mozilla/5.0 (Windows NT 10.0) Chrome/120.0', 3
    ],
    ['127.0.0.3', '12/Jan/2024:10', '/missing',   404, '-', 'curl/7.88', 2],
    ['127.0.0.4', '13/Jan/2024:11', '/img/a.png', 200, '-', 'Wget/1.21', 1],
);
my $log = '';
for my $v (@visits) {
    my ($ip, $hour, $path, $status, $referer, $agent, $n) = @$v;
    $log .= sprintf qq{%s - - [%s:%02d:00 +0000] "GET %s HTTP/1.1" %d %d "%s" "%s"\n}, $ip, $hour,
        7 * $_, $path, $status, 1000 * $n + $_, $referer, $agent
        for 1 .. $n;
}
write_file("$dir/access.log",             $log);
write_file("$dir/conf/awstats.test.conf", <<"CONF");
LogFile="$dir/access.log"
LogType=W
LogFormat=1
SiteDomain="localhost"
HostAliases="localhost 127.0.0.1"
DNSLookup=0
DirData="$dir/data"
DirCgi="/cgi-bin"
DirIcons="/awstats-icon"
AllowToUpdateStatsFromBrowser=0
CONF
mkdir "$dir/data" or die;
system($^X, $awstats, '-config=test', "-configdir=$dir/conf", '-update') == 0
    or BAIL_OUT('awstats could not make its statistics');
system("chmod -R a+rX $dir") == 0 or die;

my $site = Perennial::Test::DebianApp->start(
    dir     => $dir,
    scripts => '/usr/lib/cgi-bin',
    conf    => "SetEnv AWSTATS_ENABLE_CONFIG_DIR $dir/conf\n",
);
my $q = "awstats.pl?config=test&configdir=$dir/conf&month=01&year=2024";
$site->compare(
    [   ['the frames',      $q,                                     shows => qr/<frameset/],
        ['the main report', "$q&framename=mainright",               shows => qr{>/about\.html</a>}],
        ['the menu',        "$q&framename=mainleft",                shows => qr/Who:/],
        ['the pages',    "$q&framename=mainright&output=urldetail", shows => qr{>/about\.html</a>}],
        ['the browsers', "$q&framename=mainright&output=browserdetail", shows => qr/Firefox/],
        ['the errors',   "$q&framename=mainright&output=errors404",     shows => qr{/missing}],
        [   'a site it has no configuration for',
            "awstats.pl?config=nosuch&configdir=$dir/conf",
            shows => qr/Couldn't open config file/
        ],
        [   'a directory not allowed',
            'awstats.pl?config=test&configdir=/etc',
            shows => qr/AWSTATS_ENABLE_CONFIG_DIR/
        ],
    ],
    same => sub ($page) { $page =~ s/^(?:Last-Modified|Expires): .*\n//mgr }
);
$site->stop;
done_testing;
