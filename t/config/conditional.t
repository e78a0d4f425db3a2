use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Config;
use Perennial::Test qw(perennial scratch_dir write_file);

# What Apache settles while it reads its files: IfModule, IfDefine, IfVersion, Define and
# ${NAME}, Include and IncludeOptional with wildcards, and the directives that mean nothing here
my $dir = scratch_dir();

subtest '<IfModule>: true for what Perennial does, false for the rest' => sub {
    my $file = write_file("$dir/ifmodule.conf", <<'CONF');
<IfModule mod_perl.c>
    StartServers 2
</IfModule>
<IfModule perl_module>
    MinSpareServers 2
</IfModule>
<IfModule mpm_prefork_module>
    MaxSpareServers 7
</IfModule>
<IfModule !mod_cgi.c>
    MaxClients 99
</IfModule>
<IfModule mod_ssl.c>
    SSLEngine on
</IfModule>
<IfModule mod_rewrite.c>
    RewriteEngine On
</IfModule>
<IfModule !mpm_event_module>
    <IfModule mod_alias.c>
        ServerLimit 17
    </IfModule>
</IfModule>
CONF
    my $c = Perennial::Config->load(file => $file);
    is_deeply [map { $c->$_ }
            qw(start_servers min_spare_servers max_spare_servers max_clients server_limit)],
        [2, 2, 7, 17, 17],
        'mod_perl, prefork and mod_alias are there, mod_ssl, mod_rewrite and the event MPM are not; nesting works';
};

subtest '<IfDefine> with -D NAME and Define; ${NAME} from Define and the environment' => sub {
    local $ENV{PERENNIAL_TEST_CLIENTS} = 12;
    my $file = write_file("$dir/ifdefine.conf", <<'CONF');
Define POOL 3
<IfDefine POOL>
    StartServers ${POOL}
</IfDefine>
<IfDefine BIG>
    MaxClients 64
</IfDefine>
<IfDefine !BIG>
    MaxClients ${PERENNIAL_TEST_CLIENTS}
</IfDefine>
CONF
    my $c = Perennial::Config->load(file => $file);
    is $c->start_servers, 3,  'Define and ${NAME}';
    is $c->max_clients,   12, 'a variable of the environment';
    is(Perennial::Config->load(file => $file, defines => ['BIG'])->max_clients,
        64, 'a define from outside');
    my $big = write_file("$dir/big.conf", "<IfDefine BIG>\n    MaxClients lots\n</IfDefine>\n");
    my ($out, $code) = perennial('configtest', '-c', $big);
    is $code, 0, 'what is not defined is not read' or diag $out;

    for my $flag (['-D', 'BIG'], ['-DBIG'], ['--define', 'BIG']) {
        ($out, $code) = perennial('configtest', @$flag, '-c', $big);
        like $out, qr/big\.conf line 2: MaxClients must be/, "@$flag on the command line defines";
    }
    ($out)
        = perennial('configtest', '-c',
        write_file("$dir/undef.conf", "ErrorLog \${NOWHERE_DEFINED}/x.log\n"));
    like $out, qr/undef\.conf line 1: config variable \$\{NOWHERE_DEFINED\} is not defined/,
        'an undefined variable is said';
};

subtest '<IfVersion> against Apache 2.4' => sub {
    my $file = write_file("$dir/ifversion.conf", <<'CONF');
<IfVersion >= 2.4>
    StartServers 4
</IfVersion>
<IfVersion < 2.4>
    StartServers 1
</IfVersion>
<IfVersion 2.2>
    MaxClients 1
</IfVersion>
<IfVersion ~ ^2\.4\.>
    MinSpareServers 3
</IfVersion>
<IfVersion !/^1\./>
    MaxSpareServers 9
</IfVersion>
<IfVersion > 2.4>
    ServerLimit 300
</IfVersion>
<IfVersion = 2.4>
    ServerLimit 1
</IfVersion>
CONF
    my $c = Perennial::Config->load(file => $file);
    is_deeply [map { $c->$_ } qw(start_servers max_clients min_spare_servers max_spare_servers)],
        [4, 256, 3, 9], '>=, <, a bare version, ~ regex and !/regex/';
    is $c->server_limit, 300, 'a part not given is 0, as in Apache: 2.4.71 > 2.4, not = 2.4';
    my ($out)
        = perennial('configtest', '-c',
        write_file("$dir/badversion.conf", "<IfVersion >> 2>\n</IfVersion>\n"));
    like $out, qr/badversion\.conf line 1: <IfVersion> unknown operator '>>'/,
        'a bad operator is named';
};

subtest 'Include and IncludeOptional: wildcards in sorted order, relative to ServerRoot' => sub {
    write_file("$dir/site/conf.d/20-b.conf",  "MaxClients 20\n");
    write_file("$dir/site/conf.d/10-a.conf",  "MaxClients 10\nStartServers 1\n");
    write_file("$dir/site/conf.d/README",     "not a config\n");
    write_file("$dir/site/mods/one.load",     "MinSpareServers 2\n");
    write_file("$dir/site/sites/x/site.conf", "MaxSpareServers 8\n");
    write_file("$dir/site/nested/inner.conf", "Include conf.d/10-a.conf\n");
    my $main = write_file("$dir/site/main.conf", <<'CONF');
Include conf.d/*.conf
IncludeOptional mods/*.load
IncludeOptional nothing-here/*.conf
IncludeOptional missing.conf
Include sites/*/site.conf
CONF
    my $c = Perennial::Config->load(file => $main);
    is $c->max_clients,       20, 'conf.d/*.conf read in sorted order: the later file wins';
    is $c->min_spare_servers, 2,  'IncludeOptional with matches';
    is $c->max_spare_servers, 8,  'a wildcard in a directory part';
    my ($out, $code)
        = perennial('configtest', '-c',
        write_file("$dir/site/strict.conf", "Include none/*.conf\n"));
    like $out, qr/strict\.conf line 1: Include: no file matches '\Q$dir\E\/site\/none\/\*\.conf'/,
        'Include of a wildcard that matches nothing is an error';
    my $nested = write_file("$dir/site/n.conf", "Include nested/inner.conf\n");
    is(Perennial::Config->load(file => $nested)->start_servers,
        1, 'a path in an included file is relative to ServerRoot, not to that file');
    write_file("$dir/other/x.conf", "StartServers 6\n");
    my $root = write_file("$dir/site/root.conf", "ServerRoot $dir/other\nInclude x.conf\n");
    is(Perennial::Config->load(file => $root)->start_servers, 6, 'ServerRoot moves the base');
    write_file("$dir/site/tree/a.conf",     "StartServers 2\n");
    write_file("$dir/site/tree/sub/b.conf", "MaxSpareServers 7\n");
    my $tree = Perennial::Config->load(file => write_file("$dir/site/tree.conf", "Include tree\n"));
    is_deeply [$tree->start_servers, $tree->max_spare_servers], [2, 7],
        'a directory: its files and its subdirectories\' files, as Apache reads them';
};

subtest 'directives with no meaning here are accepted and listed once' => sub {
    my $file = write_file("$dir/ignored.conf", <<'CONF');
LoadModule perl_module /usr/lib/apache2/modules/mod_perl.so
LoadModule cgi_module /usr/lib/apache2/modules/mod_cgi.so
Mutex file:/var/lock default
HostnameLookups Off
EnableSendfile On
LogLevel warn ssl:warn
<VirtualHost *:80>
    ServerName inside.test
    LogLevel info mod_rewrite.c:trace3
</VirtualHost>
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 0, 'Syntax OK' or diag $out;
    like $out, qr/LoadModule \(2 lines\): Perennial loads no Apache modules/, 'LoadModule, counted';
    like $out, qr/Mutex \(\S+ignored\.conf line 3\): each worker waits on its own epoll/,
        'Mutex, with its line';
    like $out, qr/LogLevel for a module ignored: ssl:warn/, 'a module\'s LogLevel';
    like $out, qr/ignored\.conf line 9: LogLevel for a module ignored: mod_rewrite\.c:trace3/,
        'and one in a virtual host, with its line';
    is(Perennial::Config->load(file => $file)->log_level, 'warn', 'LogLevel warn');
    my $alone = write_file("$dir/modules.conf", "LogLevel TRACE3\nLogLevel ssl:warn\n");
    is(Perennial::Config->load(file => $alone)->log_level,
        'debug',
        'Apache\'s trace3, any case; a LogLevel with only a module\'s level leaves it alone');
    is(Perennial::Config->load(file => $alone, overrides => {log_level => 'crit'})->log_level,
        'error', 'as does --log-level');
    ($out, $code) = perennial('configtest', '-c', write_file("$dir/typo.conf", "MaxClientz 3\n"));
    like $out, qr/typo\.conf line 1: unknown directive 'MaxClientz'/,
        'anything else is still an error';
};

subtest 'PerlSwitches and PerlPostConfigRequire' => sub {
    write_file("$dir/startup.pl", "1;\n");
    my $file = write_file("$dir/switches.conf",
        "PerlSwitches -I$dir/lib -I $dir/lib2 -w -T\nPerlPostConfigRequire $dir/startup.pl\n");
    my $c = Perennial::Config->load(file => $file);
    is_deeply $c->includes, ["$dir/lib", "$dir/lib2"], '-I, joined or apart';
    is $c->perl_warnings, 1, '-w';
    is_deeply $c->requires, ["$dir/startup.pl"], 'PerlPostConfigRequire is a PerlRequire';
    like join("\n", $c->warnings),
        qr/PerlSwitches -T ignored: taint mode belongs to the whole interpreter/,
        '-T is said to have no effect';
};

done_testing;
