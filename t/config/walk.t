use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Config;
use Perennial::Test qw(scratch_dir write_file);
use Perennial::Walk;

# Which sections apply to a request and in which order they merge, as Apache 2.4 does it;
# in-process, from a configuration file read by Perennial::Config
my $dir = scratch_dir();

sub walk_of ($text) {
    my $config = Perennial::Config->load(file => write_file("$dir/walk.conf", $text));
    return Perennial::Walk->new(sections => $config->sections, base => $config->server_dir);
}

sub merged ($walk, $url, $d, $f) { $walk->merged($walk->matching($url, $d, $f)) }

sub lines ($set) {
    join ',', map {"$_->{kind}:$_->{line}"} @{$set->{sections}};
}

subtest 'Apache order: Directory by depth, regex directories, Files, then Location' => sub {
    my $walk = walk_of(<<'CONF');
<Location /app>
    SetEnv WHO location
</Location>
<Directory /srv/www/app>
    SetEnv WHO deep-directory
</Directory>
<Files "*.pl">
    SetEnv WHO files
</Files>
<Directory />
    SetEnv WHO root-directory
</Directory>
<DirectoryMatch "^/srv/www/">
    SetEnv WHO directory-match
</DirectoryMatch>
<Directory /srv/www>
    SetEnv WHO shallow-directory
</Directory>
CONF
    my $set = merged($walk, '/app/x.pl', '/srv/www/app', 'x.pl');
    is lines($set), 'directory:10,directory:16,directory:4,directory:13,files:7,location:1',
        'the order of the merge';
    is $set->{set_env}{WHO}, 'location', 'the Location comes last and wins';
    is merged($walk, '/other/x.txt', '/srv/www/app', 'x.txt')->{set_env}{WHO}, 'directory-match',
        'without Files and Location, the regex directory comes after the plain ones';
};

subtest 'two sections for one path both apply; the later one wins where they differ' => sub {
    my $walk = walk_of(<<'CONF');
<Location /status>
    SetHandler server-status
</Location>
<Location /status>
    Require all denied
</Location>
CONF
    my $set = merged($walk, '/status', undef, undef);
    is $set->{handler}, 'server-status', 'the handler from the first';
    ok $set->{require}, 'the Require from the second';
    like $set->{where}, qr/walk\.conf line 4/, 'which names its line';
};

subtest 'Location matching: whole segments, wildcards, regexes' => sub {
    my $walk = walk_of(<<'CONF');
<Location /app>
    SetEnv A 1
</Location>
<Location /dir/>
    SetEnv B 1
</Location>
<Location /w*/x>
    SetEnv C 1
</Location>
<LocationMatch "\.secret$">
    SetEnv D 1
</LocationMatch>
<Location ~ "^/re">
    SetEnv E 1
</Location>
CONF
    my %on = map { $_ => join '', sort keys %{merged($walk, $_, undef, undef)->{set_env} // {}} }
        qw(/app /app/x /apple /dir /dir/ /dir/y /wow/x /wow/x/y /a.secret /red);
    is_deeply \%on,
        {
        '/app'      => 'A',
        '/app/x'    => 'A',
        '/apple'    => '',
        '/dir'      => '',
        '/dir/'     => 'B',
        '/dir/y'    => 'B',
        '/wow/x'    => 'C',
        '/wow/x/y'  => '',
        '/a.secret' => 'D',
        '/red'      => 'E'
        },
        'each URL and the sections it takes';
};

subtest 'Directory: the directory and below; wildcards stay within a segment; Files inside' => sub {
    my $walk = walk_of(<<'CONF');
<Directory /srv/www>
    SetEnv A 1
</Directory>
<Directory /home/*/public_html>
    SetEnv B 1
    <Files "private.*">
        SetEnv C 1
    </Files>
</Directory>
<FilesMatch "^\.ht">
    SetEnv D 1
</FilesMatch>
<Directory /var/*/htdocs/>
    SetEnv E 1
</Directory>
<Directory //opt//site/>
    SetEnv F 1
</Directory>
CONF
    my %on = map {
        my ($d, $f) = @$_;
        ("$d/$f" => join '', sort keys %{merged($walk, '/x', $d, $f)->{set_env} // {}})
        } ['/srv/www', 'i.html'], ['/srv/www/sub', 'i.html'], ['/srv/wwwx', 'i.html'],
        ['/home/u/public_html/a', 'private.txt'], ['/home/u/v/public_html', 'private.txt'],
        ['/srv/other',            'private.txt'], ['/srv/www',              '.htpasswd'],
        ['/var/a/htdocs',         'i.html'],      ['/opt/site/sub',         'i.html'];
    is_deeply \%on, {
        '/srv/www/i.html'                   => 'A',
        '/srv/www/sub/i.html'               => 'A',
        '/srv/wwwx/i.html'                  => '',
        '/home/u/public_html/a/private.txt' => 'BC',
        '/home/u/v/public_html/private.txt' => '',
        '/srv/other/private.txt'            => '',
        '/srv/www/.htpasswd'                => 'AD',
        '/var/a/htdocs/i.html'              => 'E',    # A trailing slash names the same
        '/opt/site/sub/i.html'              => 'F',    # and // is /
        },
        'each file and the sections it takes';
};

subtest 'Options: + and - change what is inherited, a plain list replaces it' => sub {
    my $walk = walk_of(<<'CONF');
Options Indexes FollowSymLinks
<Directory /a>
    Options +ExecCGI -Indexes
</Directory>
<Directory /a/b>
    Options None
</Directory>
<Directory /a/b/c>
    Options +Includes
</Directory>
CONF
    my $opts = sub ($d) { join ',', sort keys %{merged($walk, '/', $d, 'f')->{options}} };
    is $opts->('/x'),     'FollowSymLinks,Indexes', 'the server level';
    is $opts->('/a'),     'ExecCGI,FollowSymLinks', '+ExecCGI -Indexes';
    is $opts->('/a/b'),   '',                       'None';
    is $opts->('/a/b/c'), 'Includes',               '+Includes onto None';
    ok merged($walk, '/', '/a', 'f')->{exec_cgi}, 'ExecCGI is on where it is on';
    like(
        (eval { walk_of("Options +ExecCGI Indexes\n") } // $@),
        qr/either all options have \+ or -/,
        'mixing signed and plain options is refused, as Apache 2.4'
    );
};

subtest 'the merged settings are made once per set of sections' => sub {
    my $walk = walk_of("<Location /a>\n    SetEnv A 1\n</Location>\n");
    is merged($walk, '/a/1', undef, undef), merged($walk, '/a/2', undef, undef), 'the same object';
};

done_testing;
