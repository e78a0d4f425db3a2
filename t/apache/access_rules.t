use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving site_files);

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
    'www/by-subdomain/x.txt'  => "x\n",
    'www/no-bots/x.txt'       => "x\n",
    'www/compat-bots/x.txt'   => "x\n",
    'www/trusted/x.txt'       => "x\n",
    'www/by-name/x.txt'       => "x\n",
    'www/get-only/x.txt'      => "x\n",
    'www/private/x.txt'       => "x\n",
    'www/user-and-ip/x.txt'   => "x\n",
    'www/user-or-ip/x.txt'    => "x\n",
    'www/idx/deny.html'       => "denied index\n",
    'www/idx/p.txt'           => "the next index\n",
    'www/no-shouting/x.txt'   => "x\n",
    'www/rawd/x.txt'          => "x\n",
    'www/under/x.txt'         => "x\n",
    'www/key/x.txt'           => "x\n",
    'www/sidx/index.html'     => "slash index\n",
    'lnk/d/x.txt'             => "behind a link\n",
);

# alice twice: her first line counts, as Apache reads the file; bob once
my $users = "$dir/users";
for my $login ([alice => 'first-pw'], [alice => 'second-pw'], [bob => 'bob-pw']) {
    my $line = `htpasswd -nbm @$login`;
    die 'htpasswd failed' unless $? == 0 && $line =~ /\A$login->[0]:/;
    open(my $fh, '>>', $users) or die "$users: $!";
    print $fh $line =~ s/\n+\z/\n/r;
    close $fh;
}
chmod 0644, $users;
site_files(
    $dir,
    'cgi/vars.pl' => qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{print "\$_=", \$ENV{\$_} // '(none)', "\\n" for qw(HTTPS PASSED bad_bot FROM_IF TRUSTED);\n},
    'cgi/values.pl' => qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{print "\$_=", \$ENV{\$_} // '(none)', "\\n" for qw(WHOLE EMPTY GONE UNDER REDIRECT_ASKED REDIRECT_STATUS REDIRECT_URL AMP LIT BX X_Y _abc);\n},
    'cgi/headers.pl' => qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{print "\$_\\n" for sort grep { /\\AHTTP_X/ } keys %ENV;\n}
);

# Symlinks: one on the way to an Alias's directory, one a <DirectoryMatch>'s Options would let be
# followed (Apache applies those after its walk), and one a <Directory>'s do
site_files(
    $dir,
    'www/secret/s.txt' => "secret\n",
    'www/pub/p.txt'    => "pub\n",
    'www/linked/l.txt' => "l\n"
);
symlink("$dir/www",        "$dir/wwwlink")               or die "symlink: $!";
symlink('../secret/s.txt', "$dir/www/pub/s-link.txt")    or die "symlink: $!";
symlink('../secret/s.txt', "$dir/www/linked/s-link.txt") or die "symlink: $!";

my $conf = <<"CONF";
<Directory />
    Options None
</Directory>
<DirectoryMatch "^$dir/www/pub">
    Options +FollowSymLinks
</DirectoryMatch>
<Directory $dir/www/linked>
    Options +FollowSymLinks
</Directory>
Alias /viaroot $dir/wwwlink
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
BrowserMatch BadBot bad_bot
BrowserMatch Shouting SHOUT_BOT
SetEnvIf X-Key ^k1\$ Ok
SetEnvIf X-A "(a)(b)" WHOLE=x\$1y\$2z\$0 EMPTY= GONE=here
SetEnvIf X-A "b" GONE=!q
SetEnvIf X_A . UNDER
SetEnvIf Request_URI /\$ SLASH
SetEnvIf Request_URI (.*) ASKED=\$1
SetEnvIf X-U (.+) STATUS=\$1 URL=\$1
SetEnvIf X-A "(a)" AMP=a&b BX=a\\xb X-Y=1 1abc=2
BrowserMatch BadBot LIT=\$0
SetEnvIf X_Bad . bad_under
SetEnvIf Request_URI "^/rawd/" RAWOK
<Location /rawd>
    Require env RAWOK
</Location>
<Location /under>
    <RequireAll>
        Require all granted
        Require not env bad_under
    </RequireAll>
</Location>
<Location /no-shouting>
    <RequireAll>
        Require all granted
        Require not env shout_bot
    </RequireAll>
</Location>
<Location /key>
    Require env OK
</Location>
<Directory $dir/www/sidx>
    Require env SLASH
</Directory>
<Location /lost>
    ErrorDocument 404 /cgi/values.pl
</Location>
Alias /al $dir/lnk/d
SetEnvIf X-Forwarded-Proto ^https\$ HTTPS=on
SetEnvIfNoCase X-Pass "^(a.*)" PASSED=got-\$1 FROM_IF=if
<Location /no-bots>
    <RequireAll>
        Require all granted
        Require not env bad_bot
    </RequireAll>
</Location>
<Location /compat-bots>
    Order Allow,Deny
    Allow from all
    Deny from env=bad_bot
</Location>
<Location /trusted>
    SetEnv TRUSTED 1
    Require env TRUSTED
</Location>
<Location /cgi>
    SetEnv FROM_IF set
    SetEnv TRUSTED yes
</Location>
<Location /by-subdomain>
    Require host .localhost
</Location>
<Location /by-name>
    Require host localhost
</Location>
<Location /get-only>
    Require method GET
</Location>
<Directory $dir/www/idx>
    DirectoryIndex deny.html p.txt
</Directory>
<Files deny.html>
    Require all denied
</Files>
<Location /user-and-ip>
    AuthType Basic
    AuthName "both"
    AuthUserFile $users
    <RequireAll>
        Require valid-user
        Require ip 10.0.0.1
    </RequireAll>
</Location>
<Location /user-or-ip>
    AuthType Basic
    AuthName "either"
    AuthUserFile $users
    <RequireAny>
        Require ip 10.0.0.1
        Require user bob
    </RequireAny>
</Location>
<Location /private>
    AuthType Basic
    AuthName "private"
    AuthUserFile $users
    Require valid-user
</Location>
ScriptAlias /cgi/ $dir/cgi/
CONF
my ($apid, $aport) = apache_serving(
    $dir, $conf,
    qw(authz_core authz_host authz_user authn_core authn_file auth_basic access_compat env setenvif
        alias cgi dir mime)
);
my $srv = start_server(workers => 1, conf => $conf);

my @asked = (
    ['a backslash in a quoted <LocationMatch> is the regex\'s',        '/api/v1/admin/x.txt',  403],
    ['and what it does not match is served',                           '/api/v1/public/x.txt', 200],
    ['a backslash in a quoted <FilesMatch> too',                       '/run.pl.bak',          403],
    ['<DirectoryMatch> on the whole path: a dot file',                 '/.env',                403],
    ['the file in a directory its regex ends at is not it',            '/sub/ss.txt',          200],
    ['the directory asked for with its slash is',                      '/sub/',                403],
    ['and without it is not (the slash redirect)',                     '/sub',                 301],
    ['a regex that ends at a file name matches that file',             '/other/ss.txt',        403],
    ['and not the directory, whose index is served',                   '/other/',              200],
    ['a plain file',                                                   '/notes.txt',           200],
    ['a symlink on the way to an Alias\'s directory, Options None',    '/viaroot/notes.txt',   403],
    ['a <DirectoryMatch>\'s FollowSymLinks does not count on the way', '/pub/s-link.txt',      403],
    ['a <Directory>\'s does',                                          '/linked/s-link.txt',   200],
);

for my $ask (@asked) {
    my ($what, $path, $status) = @$ask;
    is answer_of($aport,     {}, GET => $path)->{status}, $status, "Apache: $what ($path)";
    is answer_of($srv->port, {}, GET => $path)->{status}, $status, "Perennial: $what ($path)";
}

like $srv->error_log,
    qr{\[error\] Symbolic link not allowed or link target not accessible: \Q$dir\E/wwwlink },
    'the symlink\'s refusal is in the error log, as Apache\'s';

# Who the client is, and how it asks
my $basic = sub ($token) {"Authorization: Basic $token"};
my @more  = (
    [   'BrowserMatch sets what Require not env refuses',
        GET => '/no-bots/x.txt',
        'User-Agent: BadBot/1.0'
    ],
    ['and another browser is let in', GET => '/no-bots/x.txt',     'User-Agent: Good/1.0'],
    ['Deny from env= sees it too',    GET => '/compat-bots/x.txt', 'User-Agent: BadBot/1.0'],
    ['SetEnv comes after the access checks: Require env does not see it', GET => '/trusted/x.txt'],
    ['a leading dot wants a name below the domain', GET  => '/by-subdomain/x.txt'],
    ['without it, the name itself',                 GET  => '/by-name/x.txt'],
    ['Require method GET lets HEAD in',             HEAD => '/get-only/x.txt'],
    ['and not POST', POST => '/get-only/x.txt', 'Content-Type: text/plain', 'body'],
    [   'a user\'s first line in the file counts',
        GET => '/private/x.txt',
        $basic->('YWxpY2U6Zmlyc3QtcHc=')
    ],
    ['not a later one', GET => '/private/x.txt', $basic->('YWxpY2U6c2Vjb25kLXB3')],
    [   'a token with bytes before its base64 is no user',
        GET => '/private/x.txt',
        $basic->('!!Ym9iOmJvYi1wdw==')
    ],
    [   'RequireAll of a user and an address it is not: no user would help',
        GET => '/user-and-ip/x.txt'
    ],
    ['not even a good one', GET => '/user-and-ip/x.txt', $basic->('Ym9iOmJvYi1wdw==')],
    ['RequireAny of an address it is not and a user: asked who it is', GET => '/user-or-ip/x.txt'],
    ['and let in as that user',     GET => '/user-or-ip/x.txt', $basic->('Ym9iOmJvYi1wdw==')],
    ['another user is asked again', GET => '/user-or-ip/x.txt', $basic->('YWxpY2U6Zmlyc3QtcHc=')],
    [   'two Authorization headers: the first counts',
        GET => '/private/x.txt',
        $basic->('Ym9iOmJvYi1wdw=='), $basic->('YWxpY2U6c2Vjb25kLXB3')
    ],
    ['where the same token alone is one', GET => '/private/x.txt', $basic->('Ym9iOmJvYi1wdw==')],
);
for my $ask (@more) {
    my ($what, @request) = @$ask;
    my $want = answer_of($aport, {}, @request)->{status};
    is answer_of($srv->port, {}, @request)->{status}, $want, "$what: $want, as Apache's";
}

# A DirectoryIndex name its access rules refuse is passed over for the next, as mod_dir's
my $apache_index = answer_of($aport, {}, GET => '/idx/');
is_deeply [@$apache_index{qw(status body)}], [200, "the next index\n"],
    'Apache: a refused index name is passed over for the next';
my $index = answer_of($srv->port, {}, GET => '/idx/');
is_deeply [@$index{qw(status body)}], [200, "the next index\n"], 'Perennial: the same';
is answer_of($srv->port, {}, GET => '/idx/deny.html')->{status}, 403,
    'the refused one stays refused';

# What a script sees of them: SetEnvIf's variables ($1 from the regex, NoCase), under SetEnv's
my @vars = ('User-Agent: BadBot/1.0', 'X-Forwarded-Proto: https', 'X-Pass: ABC');
my $seen = answer_of($aport, {}, GET => '/cgi/vars.pl', @vars)->{body};
is $seen, "HTTPS=on\nPASSED=got-ABC\nbad_bot=1\nFROM_IF=set\nTRUSTED=yes\n",
    'Apache: a script sees SetEnvIf\'s and BrowserMatch\'s variables, SetEnv\'s over them';
is answer_of($srv->port, {}, GET => '/cgi/vars.pl', @vars)->{body}, $seen, 'Perennial: the same';
is answer_of($srv->port, {}, GET => '/cgi/vars.pl')->{body},
    answer_of($aport, {}, GET => '/cgi/vars.pl')->{body}, 'and none of them when nothing matched';

# Variables' names whatever their case, as Apache's table has them
for my $ask (['/no-shouting/x.txt', 'User-Agent: Shouting/1.0'], ['/key/x.txt', 'X-Key: k1']) {
    my $want = answer_of($aport, {}, GET => @$ask)->{status};
    is answer_of($srv->port, {}, GET => @$ask)->{status}, $want,
        "$ask->[0]: a variable's name in another case is the same variable, $want as Apache's";
}

# Values as ap_pregsub makes them ($0 the whole match, VAR= is 1, a value that begins with ! unsets),
# an attribute with "_" names no header, and what an ErrorDocument's script sees (REDIRECT_*)
for my $ask (['/cgi/values.pl', 'X-A: ab', 'User-Agent: BadBot/2'],
    ['/lost/thing', 'X-A: 1', 'X-U: 200'])
{
    my $want = answer_of($aport, {}, GET => @$ask)->{body};
    is answer_of($srv->port, {}, GET => @$ask)->{body}, $want,
        "$ask->[0]: a script sees " . join(', ', split /\n/, $want);
}

# A header named with "_" is one SetEnvIf sees, as Apache's (the parser leaves it out of the
# rest); server-level rules see Request_URI as sent
for my $ask (['/under/x.txt', 'X_Bad: 1'], ['/rawd/x.txt'], ['/%72awd/x.txt'], ['/x/../rawd/x.txt'])
{
    my $want = answer_of($aport, {}, GET => @$ask)->{status};
    is answer_of($srv->port, {}, GET => @$ask)->{status}, $want,
        "$ask->[0] @$ask[1 .. $#$ask]: $want, as Apache's";
}

# A DirectoryIndex file keeps the variables of its directory's request, as mod_dir's subrequest
my $slash = answer_of($aport, {}, GET => '/sidx/');
is_deeply [@{answer_of($srv->port, {}, GET => '/sidx/')}{qw(status body)}],
    [@$slash{qw(status body)}],
    "a DirectoryIndex file under the directory's variables: $slash->{status}, as Apache's";

# A symlink put on the way to a root after its first request: refused from then on, as Apache
# walks the path on every request
is answer_of($srv->port, {}, GET => '/al/x.txt')->{status}, 200, 'behind a directory: 200';
rename "$dir/lnk", "$dir/lnk-real" or die "rename: $!";
symlink "$dir/lnk-real", "$dir/lnk" or die "symlink: $!";
my $linked = answer_of($aport, {}, GET => '/al/x.txt')->{status};
is $linked, 403, 'Apache: the same path behind a symlink made since, Options None: 403';
is answer_of($srv->port, {}, GET => '/al/x.txt')->{status}, $linked, 'Perennial: the same';

# A header whose name has a byte that is not a letter, a digit or "-" is no CGI variable
my @headers = ('X-Plain: 1', 'X.Dot: 2', 'X~Tilde: 3', 'X!Bang: 4');
my $apache  = answer_of($aport, {}, GET => '/cgi/headers.pl', @headers)->{body};
is $apache, "HTTP_X_PLAIN\n", 'Apache: only the plain name reaches a script';
is answer_of($srv->port, {}, GET => '/cgi/headers.pl', @headers)->{body}, $apache,
    'Perennial: the same';

$srv->stop;
kill 'TERM', $apid;
done_testing;
