use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(apache_available);
use Perennial::Test::DebianApp;

# Debian's gitweb, installed as Debian installs it (/usr/lib/cgi-bin/gitweb.cgi is a symlink
# into /usr/share/gitweb), over a repository this test makes: mod_cgi's answers, and
# Perennial's under CGI, PerlRun and Registry
plan skip_all => 'apache2 and gitweb are not installed (make test installs them)'
    unless apache_available() && -l '/usr/lib/cgi-bin/gitweb.cgi' && -x '/usr/bin/git';
my $dir  = scratch_dir();
my $repo = "$dir/projects/demo.git";
my $work = "$dir/work";
{
    local $ENV{GIT_AUTHOR_DATE}    = '2026-01-02T03:04:05Z';
    local $ENV{GIT_COMMITTER_DATE} = '2026-01-02T03:04:05Z';
    my $git = "git -c user.name=Test -c user.email=test\@example.test -c init.defaultBranch=main";
    system("$git init -q $work && echo 'hello gitweb' > $work/README && $git -C $work add README "
            . "&& $git -C $work commit -qm 'first commit' && $git clone -q --bare $work $repo") == 0
        or BAIL_OUT('git could not make the repository');
    write_file("$repo/description", "A test repository\n");
}
my @www = getpwnam 'www-data';
system('chown', '-R', "$www[2]:$www[3]", "$dir/projects") if $> == 0 && @www; # git's safe.directory
system("chmod -R a+rX $dir") == 0 or die;
write_file("$dir/gitweb.conf", qq{\$projectroot = "$dir/projects";\n\$git_temp = "/tmp";\n});

my $site = Perennial::Test::DebianApp->start(
    dir     => $dir,
    scripts => '/usr/lib/cgi-bin',
    conf    => "SetEnv GITWEB_CONFIG $dir/gitweb.conf\n",
);
$site->compare(
    [   ['project list', 'gitweb.cgi', shows => qr/A test repository/],
        [   'a blob', 'gitweb.cgi?p=demo.git;a=blob_plain;f=README;hb=HEAD',
            shows => qr/hello gitweb/
        ],
        ['the summary', 'gitweb.cgi?p=demo.git;a=summary', shows => qr/first commit/],
        [   'a snapshot', 'gitweb.cgi?p=demo.git;a=snapshot;h=HEAD;sf=tgz',
            shows => qr/\A\x1f\x8b/,    # gzip's magic
            same  => \&_listing
        ],
        ['its 404 page', 'gitweb.cgi?p=nothere.git;a=summary', shows => qr/No such project/],
    ]
);
$site->stop;

# A tar.gz made twice differs in its timestamps: the files in it are what counts
sub _listing ($tgz) {
    my $file = "$dir/snapshot.tgz";
    write_file($file, $tgz);
    return scalar qx{tar tzf $file 2>&1};
}

done_testing;
