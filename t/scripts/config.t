use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use Perennial::Test qw(configtest scratch_dir start_server wait_until write_file);

my $cgi = abs_path('t/cgi-bin');

subtest 'ScriptAlias alone is mod_cgi; <Directory> settings apply to an Alias' => sub {

    # The same scripts through a symlinked directory: <Directory> matches the path as
    # configured, so its SetHandler does not reach the ScriptAlias (as in Apache)
    my $links = scratch_dir();
    symlink $cgi, "$links/perl" or die $!;
    my $srv = start_server(workers => 1, conf => <<"CONF");
ScriptAlias /cgi-bin/ $cgi/
Alias /perl $links/perl
<Directory $links/perl>
    SetHandler perl-script
    PerlHandler ModPerl::Registry
    Options +ExecCGI
</Directory>
CONF
    is $srv->get('/cgi-bin/count.pl')->{content}, "counted 1\n", 'ScriptAlias: forked';
    is $srv->get('/cgi-bin/count.pl')->{content}, "counted 1\n", 'every time';
    is $srv->get('/perl/count.pl')->{content},    "counted 1\n", '<Directory>: Registry';
    is $srv->get('/perl/count.pl')->{content},    "counted 2\n", 'persistent';
    $srv->stop;
};

subtest 'the httpd.conf of the seed talk works as written' => sub {
    my $srv = start_server(workers => 1, conf => <<"CONF");
LoadModule perl_module modules/mod_perl.so
PerlModule ModPerl::Registry
Alias /cgi-bin $cgi
Alias /perlrun $cgi
Alias /registry $cgi
<Location /cgi-bin>
SetHandler cgi-script
Options +ExecCGI
</Location>
<Location /perlrun>
SetHandler perl-script
Options +ExecCGI
PerlHandler ModPerl::PerlRun
</Location>
<Location /registry>
SetHandler perl-script
Options +ExecCGI
PerlHandler ModPerl::Registry
</Location>
CONF
    is $srv->get("/$_/count.pl")->{content}, "counted 1\n", "/$_" for qw(cgi-bin perlrun registry);
    is $srv->get('/registry/count.pl')->{content}, "counted 2\n", 'Registry keeps its globals';
    like $srv->error_log,
        qr/\[info\] directives with no meaning here, accepted and ignored: LoadModule \(\S+ line \d+\): Perennial loads no Apache modules/,
        'LoadModule is noted once, at info';
    $srv->stop;
};

subtest 'PerlSetEnv, SetEnv and PassEnv reach scripts in every mode' => sub {
    local $ENV{PERENNIAL_TEST_PASS} = 'passed';
    my $dir = scratch_dir();
    open(my $fh, '>', "$dir/env.pl") or die $!;
    print {$fh}
        qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\n", join(',', map { \$ENV{\$_} // 'unset' } qw(A B PERENNIAL_TEST_PASS)), "\\n";\n};
    close $fh;
    chmod 0755, "$dir/env.pl";
    my $srv = start_server(workers => 1, conf => <<"CONF");
PerlSetEnv A from-server
Alias /cgi $dir
Alias /reg $dir
<Location /cgi>
    SetHandler cgi-script
    Options +ExecCGI
    SetEnv B from-location
    PassEnv PERENNIAL_TEST_PASS
</Location>
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    PerlSetEnv B from-location
    PerlPassEnv PERENNIAL_TEST_PASS
</Location>
CONF
    is $srv->get('/cgi/env.pl')->{content}, "from-server,from-location,passed\n", 'CGI';
    is $srv->get('/reg/env.pl')->{content}, "from-server,from-location,passed\n", 'Registry';
    $srv->stop;
};

subtest 'a changed script is recompiled; PerlScriptCheck Never does not look' => sub {
    my $dir   = scratch_dir();
    my $write = sub ($version) {
        open(my $fh, '>', "$dir/version.pl") or die $!;
        print {$fh} qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\n$version\\n";\n};
        close $fh;
        my $when = time + ($version eq 'v2' ? 10 : 0);
        utime $when, $when, "$dir/version.pl";
    };
    $write->('v1');
    my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /always $dir
Alias /never $dir
<Location /always>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
<Location /never>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    PerlScriptCheck Never
</Location>
CONF
    is $srv->get('/always/version.pl')->{content}, "v1\n", 'v1';
    is $srv->get('/never/version.pl')->{content},  "v1\n", 'v1 without checks';
    $write->('v2');
    is $srv->get('/always/version.pl')->{content}, "v2\n", 'Always: the edit shows at once';
    is $srv->get('/never/version.pl')->{content},  "v1\n", 'Never: still the compiled one';
    $srv->stop;
};

subtest 'PerlScriptCheck SECONDS looks at the file at most that often' => sub {
    my $dir   = scratch_dir();
    my $write = sub ($version, $when) {
        open(my $fh, '>', "$dir/version.pl") or die $!;
        print {$fh} qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\n$version\\n";\n};
        close $fh;
        utime $when, $when, "$dir/version.pl";
    };
    $write->('v1', time);
    my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /hour $dir
Alias /second $dir
<Location /hour>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    PerlScriptCheck 3600
</Location>
<Location /second>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    PerlScriptCheck 1
</Location>
CONF
    is $srv->get('/hour/version.pl')->{content},   "v1\n", 'v1, checked every hour';
    is $srv->get('/second/version.pl')->{content}, "v1\n", 'v1, checked every second';
    $write->('v2', time + 10);
    is $srv->get('/hour/version.pl')->{content}, "v1\n", 'not looked at again within the hour';
    ok wait_until(sub { $srv->get('/second/version.pl')->{content} eq "v2\n" },
        10, 'v2 after a second'),
        'looked at again once the second is over';
    unlike $srv->error_log, qr/uninitialized/, 'no warnings on the way';
    $srv->stop;
};

subtest 'PerlRun forgets required files; Registry keeps them' => sub {
    my $dir = scratch_dir();
    open(my $lib, '>', "$dir/lib.pl") or die $!;
    print {$lib} qq{\$loaded++;\n1;\n};
    close $lib;
    open(my $fh, '>', "$dir/req.pl") or die $!;
    print {$fh}
        qq{#!/usr/bin/perl\nrequire "./lib.pl";\n\$loaded += 10;\nprint "Content-Type: text/plain\\n\\nloaded \$loaded\\n";\n};
    close $fh;
    chmod 0755, "$dir/req.pl";
    my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /perlrun $dir
Alias /registry $dir
<Location /perlrun>
    SetHandler perl-script
    PerlResponseHandler Perennial::PerlRun
    Options +ExecCGI
</Location>
<Location /registry>
    SetHandler perl-script
    PerlResponseHandler Perennial::Registry
    Options +ExecCGI
</Location>
CONF
    is $srv->get('/perlrun/req.pl')->{content}, "loaded 11\n", 'PerlRun: required and run';
    is $srv->get('/perlrun/req.pl')->{content}, "loaded 11\n",
        'PerlRun: required again, into a fresh package';
    is $srv->get('/registry/req.pl')->{content}, "loaded 11\n", 'Registry: required once';
    is $srv->get('/registry/req.pl')->{content}, "loaded 21\n",
        'Registry: not again, and the package lives on';
    $srv->stop;
};

subtest 'configuration errors name the file and line' => sub {
    my ($out) = configtest(<<"CONF", 'bad.conf');
Alias /a $cgi
<Location /a>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Nonsense
    Options +ExecCGI +Frobnicate
</Location>
Alias /b $cgi/missing
<Location /c>
    SetHandler perl-script
</Location>
CONF
    like $out, qr/bad\.conf line 4: unknown handler 'ModPerl::Nonsense'/, 'unknown handler';
    like $out, qr/bad\.conf line 5: unknown option '\+Frobnicate'/,       'unknown option';
    like $out,
        qr/bad\.conf line 8: <Location \/c> with SetHandler perl-script needs PerlResponseHandler/,
        'perl-script without a handler';

    # mod_perl phases that need Apache's own machinery are refused by name, with the reason
    ($out) = configtest(<<"CONF", 'phases.conf');
PerlTransHandler My::Trans
<Location /x>
    SetHandler modperl
    PerlOutputFilterHandler My::Filter
    PerlAccessHandler 'not a name'
</Location>
PerlProcessConnectionHandler My::Echo
CONF
    like $out, qr/phases\.conf line 1: PerlTransHandler is not supported: Perennial maps URLs/,
        'PerlTransHandler is refused';
    like $out, qr/phases\.conf line 4: PerlOutputFilterHandler is not supported: mod_perl filters/,
        'an output filter is refused';
    like $out, qr/phases\.conf line 5: 'not a name' is not a handler/, 'a handler name is checked';
    like $out, qr/phases\.conf line 7: PerlProcessConnectionHandler is not supported/,
        'a protocol handler is refused';
    like $out, qr/<Location \/x> with SetHandler modperl needs PerlResponseHandler/,
        'modperl without a handler';

    # A handler module that does not load stops the start, naming its section and the reason
    my $lib = scratch_dir();
    write_file("$lib/Broken.pm", "package Broken;\nsub handler { 0 }\nsyntax error here(;\n1;\n");
    ($out) = configtest(<<"CONF", 'load.conf');
PerlSwitches -I$lib
<Location /fine>
    SetHandler modperl
    PerlResponseHandler Broken
</Location>
<Location /missing>
    SetHandler modperl
    PerlResponseHandler No::Such::Module
</Location>
CONF
    like $out,
        qr/load\.conf line 4: PerlResponseHandler Broken: Broken does not load: syntax error/,
        "a module that does not compile: its error";
};

subtest 'a handler module that is not there stops the start' => sub {
    my ($out) = configtest(<<"CONF", 'missing.conf');
<Location /missing>
    SetHandler modperl
    PerlResponseHandler No::Such::Module
    PerlFixupHandler No::Such::Module::fix
</Location>
CONF
    like $out,
        qr{missing\.conf line 4: PerlFixupHandler No::Such::Module::fix: no sub No::Such::Module::fix::handler or No::Such::Module::fix is loaded \(neither No/Such/Module/fix\.pm nor No/Such/Module\.pm is in \@INC\)},
        'the first handler that leads nowhere is named, with where it was looked for';
};
subtest 'a handler named at server level, and a PSGIApp without SetHandler, are placed too' => sub {
    my $root = scratch_dir();
    my ($out) = configtest(<<"CONF", 'server.conf');
DocumentRoot $root
PerlFixupHandler No::Such::Fixup
CONF
    like $out, qr{server\.conf line 2: PerlFixupHandler No::Such::Fixup: no sub},
        'the server-level line';
    write_file("$root/app.psgi", "die 'broken on purpose';\n");
    ($out) = configtest(<<"CONF", 'psgi.conf');
<Location /app>
    PSGIApp $root/app.psgi
</Location>
CONF
    like $out,
        qr{psgi\.conf line 1: Can't load PSGI application "\S+app\.psgi": .*broken on purpose},
        'a PSGIApp is loaded at start whatever its handler, and its error placed';
};

done_testing;
