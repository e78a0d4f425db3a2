use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(raw_request scratch_dir start_server);
use Perennial::Test::Scripts qw(start_script_server);

# Only files inside the script directory run, and nothing else is revealed
my $tree    = scratch_dir();
my $outside = scratch_dir();
mkdir "$tree/cgi" or die $!;
_script("$tree/cgi/ok.pl",       qq{print "Content-Type: text/plain\\n\\nok\\n";\n},     0755);
_script("$tree/cgi/noexec.pl",   qq{print "Content-Type: text/plain\\n\\nran\\n";\n},    0644);
_script("$outside/secret.pl",    qq{print "Content-Type: text/plain\\n\\nsecret\\n";\n}, 0755);
_script("$tree/secret-above.pl", qq{print "Content-Type: text/plain\\n\\nabove\\n";\n},  0755);
symlink "$outside/secret.pl", "$tree/cgi/link-out.pl" or die $!;
symlink "$tree/cgi/ok.pl",    "$tree/cgi/link-in.pl"  or die $!;

my $srv = start_script_server(dir => "$tree/cgi");

for my $mode (qw(cgi-bin perlrun registry)) {
    subtest "/$mode" => sub {
        is $srv->status_of("/$mode/ok.pl"),                  200, 'a script inside runs';
        is $srv->status_of("/$mode/missing.pl"),             404, 'a missing script: 404';
        is $srv->status_of("/$mode/../secret-above.pl"),     404, '.. never climbs out';
        is $srv->status_of("/$mode/%2e%2e/secret-above.pl"), 404, 'nor encoded';
        is $srv->status_of("/$mode/sub%2fok.pl"),            404, 'encoded slash: 404';
        is $srv->status_of("/$mode/ok.pl?u=a%2Fb%00c%5c"), 200,
            'in the query string, they are only data, as in Apache';
        is $srv->status_of("/$mode/ok.pl%00.txt"), 404, 'NUL byte: 404';
        is $srv->status_of("/$mode/link-out.pl"), 200,
            'a symlink out of the tree runs: FollowSymLinks is Apache\'s default';
        is $srv->status_of("/$mode/link-in.pl"), 200, 'a symlink inside the tree runs';
        is $srv->status_of("/$mode/"), $mode eq 'cgi-bin' ? 403 : 404,
            'no directory listing: mod_cgi refuses it (403), Registry and PerlRun decline (404)';
        is $srv->status_of("/$mode"), 301, 'a directory without its slash: 301';
        my $out = raw_request($srv->port,
            "GET /$mode/ok.pl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        unlike $out, qr/Content-Type: text\/plain\\n/, 'the source is never served';
    };
}
is $srv->status_of('/cgi-bin/noexec.pl'),  403, 'mod_cgi needs the execute bit: 403';
is $srv->status_of('/registry/noexec.pl'), 200, 'Registry compiles it anyway, as mod_perl does';
unlike $srv->error_log, qr/\Q$outside\E/, 'the log never names what is outside';
$srv->stop;

subtest 'symlinks as the Options of their directory say' => sub {
    my @www   = getpwnam('www-data') or return plan skip_all => 'no www-data user';
    my $other = scratch_dir();
    _script("$other/theirs.pl", qq{print "Content-Type: text/plain\\n\\ntheirs\\n";\n}, 0755);
    chown $www[2], $www[3], "$other/theirs.pl" if $> == 0;
    symlink "$other/theirs.pl", "$tree/cgi/link-theirs.pl" or die $!;
    my $conf = sub ($options) { <<"CONF" };
Alias /reg $tree/cgi
<Directory $tree/cgi>
    Options $options
</Directory>
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
</Location>
CONF
    my $srv = start_server(workers => 1, conf => $conf->('ExecCGI'));
    is $srv->status_of('/reg/ok.pl'),       200, 'a file runs';
    is $srv->status_of('/reg/link-in.pl'),  403, 'without FollowSymLinks a symlink is refused';
    is $srv->status_of('/reg/link-out.pl'), 403, 'wherever it leads';
    like $srv->error_log,
        qr{Symbolic link not allowed or link target not accessible: \S+/cgi/link-in\.pl \(request GET /reg/link-in\.pl\)},
        'and the log says which link';
    $srv->stop;
    $srv = start_server(workers => 1, conf => $conf->('ExecCGI SymLinksIfOwnerMatch'));
    is $srv->status_of('/reg/link-in.pl'), 200, 'SymLinksIfOwnerMatch: the same owner runs';
    is $srv->status_of('/reg/link-theirs.pl'), ($> == 0 ? 403 : 200),
        'another owner is refused (when the test can give the file to another user)';
    $srv->stop;
    unlink "$tree/cgi/link-theirs.pl";
};

subtest 'a script found through a symlink keeps the link\'s name, as under mod_cgi' => sub {
    _script("$outside/where.pl",
        qq{print "Content-Type: text/plain\\n\\n\$0 \$ENV{SCRIPT_FILENAME} ", __FILE__, "\\n";\n},
        0755);
    symlink "$outside/where.pl", "$tree/cgi/where.pl" or die $!;
    my $srv  = start_script_server(dir => "$tree/cgi");
    my $link = "$tree/cgi/where.pl";
    for my $mode (qw(cgi-bin perlrun registry)) {
        is $srv->get("/$mode/where.pl")->{content}, "$link $link $link\n",
            "/$mode: \$0, SCRIPT_FILENAME and __FILE__ name the link";
    }
    $srv->stop;
};

subtest 'a script that sets $0 changes its own, not the worker\'s name' => sub {
    _script("$tree/cgi/rename.pl", <<'SCRIPT', 0755);
$0 = "renamed";
open(my $cmd, '<', "/proc/$$/cmdline") or die "Can't read my process's name: $!";
my $name = do { local $/; <$cmd> };
print "Content-Type: text/plain\n\n$0\n$name\n";
SCRIPT
    my $srv = start_script_server(dir => "$tree/cgi");
    for my $mode (qw(perlrun registry)) {
        my ($zero, $name) = split /\n/, $srv->get("/$mode/rename.pl")->{content};
        is $zero, 'renamed', "/$mode: the script sees what it set";
        like $name, qr/\Aperennial worker/, "/$mode: the worker keeps its name meanwhile";
        like $srv->get("/$mode/where.pl")->{content}, qr{\A\Q$tree\E/cgi/where\.pl },
            "/$mode: and the next script sees its own \$0";
    }
    $srv->stop;
};

subtest 'without Options +ExecCGI: 403, as Apache' => sub {
    my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /registry $tree/cgi
<Location /registry>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
</Location>
CONF
    is $srv->status_of('/registry/ok.pl'), 403, 'forbidden';
    like $srv->error_log, qr/Options ExecCGI is off in this directory/, 'and the reason is logged';
    $srv->stop;
};

subtest 'PerlSetupEnv Off keeps the CGI variables out of %ENV, not PerlSetEnv' => sub {
    _script(
        "$tree/cgi/env.pl",
        q{print "Content-Type: text/plain\n\n", join(' ', map { $ENV{$_} // 'unset' }}
            . q{ qw(GATEWAY_INTERFACE PERL_SET SET_ENV)), "\n";} . "\n",
        0755
    );
    my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /on $tree/cgi
Alias /off $tree/cgi
<Location /on>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler ModPerl::Registry
</Location>
<Location /off>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler ModPerl::Registry
    PerlSetupEnv Off
</Location>
PerlSetEnv PERL_SET perl
SetEnv SET_ENV plain
CONF
    is $srv->get('/on/env.pl')->{content}, "CGI/1.1 perl plain\n", 'On: CGI, PerlSetEnv, SetEnv';
    is $srv->get('/off/env.pl')->{content}, "unset perl unset\n",
        'Off: only PerlSetEnv, as mod_perl (SetEnv is the CGI environment)';
    $srv->stop;
};

sub _script ($file, $body, $mode) {
    open(my $fh, '>', $file) or die "$file: $!";
    print {$fh} "#!/usr/bin/perl\n$body";
    close $fh;
    chmod $mode, $file;
}
done_testing;
