use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_head site_files start_apache);

# Access rules as Apache 2.4 applies them, each answer compared with Apache's for the same
# configuration and request (a rule that Perennial read otherwise would serve what Apache
# refuses): a backslash in a quoted regex is the regex's, a <DirectoryMatch> matches the whole
# path, SetEnv comes after the access checks, a leading dot in Require host wants a subdomain,
# an AuthUserFile's first line for a user counts, a Basic token is base64 or nothing, HEAD is
# GET for Require method, and symlinks on the way to a root are looked at.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
site_files(
    $dir,
    'www/index.html'          => "home\n",
    'www/.env'                => "DB_PASSWORD=hunter2\n",
    'www/api/v1/admin/x.txt'  => "admin panel\n",
    'www/api/v1/public/x.txt' => "public\n",
    'www/run.pl.bak'          => "print 'source';\n",
    'www/notes.txt'           => "notes\n",
    'www/sub/ss.txt'          => "in sub\n",
    'www/other/ss.txt'        => "other\n",
    'www/other/index.html'    => "other index\n",
);
my $conf = <<"CONF";
DocumentRoot $dir/www
<Directory $dir/www>
    Require all granted
</Directory>
<LocationMatch "^/api/v\\d+/admin">
    Require all denied
</LocationMatch>
<FilesMatch "\\w+\\.bak\$">
    Require all denied
</FilesMatch>
<DirectoryMatch ^/.*/\\.>
    Require all denied
</DirectoryMatch>
<DirectoryMatch "/sub/\$">
    Require all denied
</DirectoryMatch>
<DirectoryMatch "other/ss\\.txt\$">
    Require all denied
</DirectoryMatch>
CONF
write_file("$dir/apache.conf",
    apache_head($dir, 'RULES_PORT', qw(authz_core alias dir mime)) . $conf);
my ($apid, $aport) = start_apache("$dir/apache.conf", 'RULES_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => $conf);

my @asked = (
    ['a backslash in a quoted <LocationMatch> is the regex\'s', '/api/v1/admin/x.txt',  403],
    ['and what it does not match is served',                    '/api/v1/public/x.txt', 200],
    ['a backslash in a quoted <FilesMatch> too',                '/run.pl.bak',          403],
    ['<DirectoryMatch> on the whole path: a dot file',          '/.env',                403],
    ['the file in a directory its regex ends at is not it',     '/sub/ss.txt',          200],
    ['the directory asked for with its slash is',               '/sub/',                403],
    ['and without it is not (the slash redirect)',              '/sub',                 301],
    ['a regex that ends at a file name matches that file',      '/other/ss.txt',        403],
    ['and not the directory, whose index is served',            '/other/',              200],
    ['a plain file',                                            '/notes.txt',           200],
);

for my $ask (@asked) {
    my ($what, $path, $status) = @$ask;
    is answer_of($aport,     {}, GET => $path)->{status}, $status, "Apache: $what ($path)";
    is answer_of($srv->port, {}, GET => $path)->{status}, $status, "Perennial: $what ($path)";
}

$srv->stop;
kill 'TERM', $apid;
done_testing;
