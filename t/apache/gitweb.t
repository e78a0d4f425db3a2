use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir script_location start_server write_file);
use Perennial::Test::Apache qw(apache_available apache_head request start_apache);

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

my $cgi = <<"CONF";
SetEnv GITWEB_CONFIG $dir/gitweb.conf
ScriptAlias /cgi-bin/ /usr/lib/cgi-bin/
<Directory /usr/lib/cgi-bin>
    Require all granted
</Directory>
CONF
write_file("$dir/apache.conf",
    apache_head($dir, 'GITWEB_PORT', qw(authz_core alias cgi env mime)) . "$cgi\n");
my ($apid, $aport) = start_apache("$dir/apache.conf", 'GITWEB_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => <<"CONF");
$cgi
@{[script_location('/perlrun', '/usr/lib/cgi-bin', 'ModPerl::PerlRun')]}
@{[script_location('/registry', '/usr/lib/cgi-bin')]}
CONF

my @pages = (
    ['project list', ''],
    ['a blob',       '?p=demo.git;a=blob_plain;f=README;hb=HEAD'],
    ['the summary',  '?p=demo.git;a=summary'],
    ['a snapshot',   '?p=demo.git;a=snapshot;h=HEAD;sf=tgz'],
    ['its 404 page', '?p=nothere.git;a=summary'],
);
my %want = map {
    my ($name, $query) = @$_;
    ($name => request($aport, GET => 'localhost', "/cgi-bin/gitweb.cgi$query"))
} @pages;
is $want{'project list'}{status}, 200, 'mod_cgi serves gitweb' or diag $want{'project list'}{body};
for my $mode (qw(cgi-bin perlrun registry)) {
    for my $page (@pages) {
        my ($name, $query) = @$page;
        for my $round (1, 2) {    # Twice: a resident script must answer the second as the first
            my $got  = request($srv->port, GET => 'localhost', "/$mode/gitweb.cgi$query");
            my $w    = $want{$name};
            my $what = "/$mode $name" . ($round == 2 ? ' again' : '');
            is $got->{status}, $w->{status}, "$what: status $w->{status}";
            is $got->{headers}{'content-type'}, $w->{headers}{'content-type'},
                "$what: Content-Type";
            is _same($got->{body}, $mode), _same($w->{body}, 'cgi-bin'), "$what: the page"
                unless $name eq 'a snapshot';
            is _listing($got->{body}), _listing($w->{body}), "$what: the archive's files"
                if $name eq 'a snapshot';
        }
    }
}
like $srv->error_log, qr/manager \d+ started/, 'the server ran';
$srv->stop;

# The pages link to the script by its URL: the same page under another location
sub _same ($body, $mode) { $body =~ s{/\Q$mode\E/gitweb\.cgi}{/SCRIPT}gr }

sub _listing ($tgz) {
    my $file = "$dir/snapshot.tgz";
    write_file($file, $tgz);
    return scalar qx{tar tzf $file 2>&1};
}

done_testing;
