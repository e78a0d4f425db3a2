use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(apache_available);
use Perennial::Test::DebianApp;

# Debian's Blosxom (blosxom), from /usr/lib/cgi-bin/blosxom: a blog that is one script in a
# package of its own (`package blosxom;`), with its templates after __DATA__, its
# configuration read with `require` from BLOSXOM_CONFIG_FILE, a global its pages are appended
# to and never emptied, and file-level lexicals used inside its named subs. Its entries are
# files the test writes, dated by their mtimes. mod_cgi's pages, and Perennial's in CGI and
# PerlRun mode (ModPerl::PerlRun keeps the blosxom package, so each page there holds the ones
# before it). Registry keeps globals by design: what that does to Blosxom is logged.
my $blosxom = '/usr/lib/cgi-bin/blosxom';
plan skip_all => 'apache2 and blosxom are not installed (make test installs them)'
    unless apache_available() && -x $blosxom;
my $dir     = scratch_dir();
my @entries = (
    ['first.txt',     'Hello, blog', "<p>The first entry.</p>\n", '2023-05-01T09:15:00Z'],
    ['tech/perl.txt', 'Perl tricks', "<p>Local, not my.</p>\n",   '2023-06-02T08:30:00Z'],
    [   'tech/unix/ls.txt', 'ls -l', "<p>Long listings & their columns.</p>\n",
        '2023-06-20T17:45:00Z'
    ],
    ['life/garden.txt', 'Tomatoes', "<p>Red at last.</p>\n", '2024-08-09T12:00:00Z'],
);
for my $e (@entries) {
    my ($file, $title, $body, $when) = @$e;
    write_file("$dir/data/$file", "$title\n$body");
    my ($y, $m, $d, $h, $min) = $when =~ /(\d+)-(\d+)-(\d+)T(\d+):(\d+)/;
    my $t = qx{date -d '$y-$m-$d $h:$min UTC' +%s};
    utime $t, $t, "$dir/data/$file" or die;
}
write_file("$dir/blosxom.conf", <<"CONF");
\$blog_title = "Test Blog";
\$blog_description = "Entries the test wrote";
\$datadir = "$dir/data";
\$plugin_dir = "";
\$num_entries = 3;
1;
CONF
system("chmod -R a+rX $dir") == 0 or die;

my $site = Perennial::Test::DebianApp->start(
    dir     => $dir,
    scripts => '/usr/lib/cgi-bin',
    conf    => "SetEnv BLOSXOM_CONFIG_FILE $dir/blosxom.conf\n",
);
$site->compare(
    [   ['the front page',     'blosxom',                shows => qr/Tomatoes.*Long listings/s],
        ['a category',         'blosxom/tech',           shows => qr/Perl tricks/],
        ['a category below',   'blosxom/tech/unix',      shows => qr/ls -l/],
        ['a month',            'blosxom/2023/06',        shows => qr/Perl tricks/],
        ['a day',              'blosxom/2023/05/01',     shows => qr/Hello, blog/],
        ['one entry',          'blosxom/tech/perl.html', shows => qr/Local, not my/],
        ['the RSS feed',       'blosxom/index.rss',      shows => qr/<rss version="2.0">/],
        ['a flavour by query', 'blosxom/life?flav=rss',  shows => qr{<title>Tomatoes</title>}],
        ['nothing there',      'blosxom/2022',           shows => qr/Test Blog/],
    ],
    modes => [qw(cgi-bin perlrun)]
);
is $site->server->get('/registry/blosxom')->{status}, 200, 'under Registry it runs';
like $site->server->error_log, qr/blosxom: Variable "\$files" will not stay shared/,
    'and the log says what persistence does to it';
$site->stop;
done_testing;
