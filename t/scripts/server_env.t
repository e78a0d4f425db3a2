use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(script_location scratch_dir start_server wait_until write_file);

# The environment a site's code sees, as mod_perl gives it: at start-up, in scripts, handlers
# and applications, only what the configuration puts there (PerlSetEnv, PerlPassEnv, the CGI
# variables of a script's request), PATH and TZ; never the other variables perennial was started
# with (a printenv script would show them to every client), and never another client's request
# variables after that request has ended
my $dir = scratch_dir();
write_file("$dir/lib/My/EnvH.pm", <<'PM');
package My::EnvH;
use Apache2::Const -compile => qw(OK);
sub handler {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print(map {"$_=$ENV{$_}\n"} sort keys %ENV);
    return Apache2::Const::OK;
}
1;
PM
write_file("$dir/startup.pl", <<"PL");
open my \$fh, '>', '$dir/startup.env' or die \$!;
print {\$fh} map {"\$_=\$ENV{\$_}\\n"} sort keys %ENV;
\$ENV{FROM_STARTUP} = 'kept';
1;
PL
write_file(
    "$dir/cgi/env.pl",
    qq{#!$^X\nprint "Content-Type: text/plain\\n\\n", map {"\$_=\$ENV{\$_}\\n"} sort keys %ENV;\n},
    0755
);
write_file("$dir/cgi/child.pl", qq{#!$^X\nprint "Content-Type: text/plain\\n\\n", `env`;\n}, 0755);
write_file("$dir/env.psgi",
    q{sub { [200, ['Content-Type' => 'text/plain'], [map {"$_=$ENV{$_}\n"} sort keys %ENV]] }});
write_file("$dir/lib/My/Settings.pm", "package My::Settings;\n\$ENV{FROM_MODULE} = 'set';\n1;\n");
write_file("$dir/lib/My/EnvLog.pm",   <<"PM");
package My::EnvLog;
sub handler {
    open my \$fh, '>>', '$dir/log_env.txt' or die \$!;
    print {\$fh} join(' ', map { "\$_=" . (\$ENV{\$_} // '') } qw(QUERY_STRING HTTP_COOKIE)), "\n";
    return 0;
}
1;
PM
write_file("$dir/files/page.txt", "a page\n");
system("chmod -R a+rX $dir && chmod a+rwx $dir") == 0 or die;

local $ENV{HELPER_SECRET} = 's3cret';    # Passed on by PerlPassEnv
local $ENV{OTHER_SECRET}  = 'hidden';    # Not passed on
local $ENV{ENV_TEST_PORT};
my $srv = start_server(
    workers  => 1,
    port_env => 'ENV_TEST_PORT',
    conf     => <<"CONF");
Listen 127.0.0.1:\${ENV_TEST_PORT}
PerlSwitches -I$dir/lib
PerlSetEnv SITE_NAME site
PerlPassEnv HELPER_SECRET
PerlRequire $dir/startup.pl
PerlModule My::EnvH
PerlModule My::Settings
Alias /files $dir/files
<Location /files>
    PerlLogHandler My::EnvLog
</Location>
@{[ script_location('/perl', "$dir/cgi", 'ModPerl::Registry', "    PerlOptions +ParseHeaders\n") ]}
ScriptAlias /cgi-bin/ $dir/cgi/
<Location /h>
    SetHandler modperl
    PerlResponseHandler My::EnvH
    PerlSetEnv LOC_VAR here
</Location>
<Location /app>
    SetHandler psgi
    PSGIApp $dir/env.psgi
</Location>
CONF
my $get = sub ($path, @headers) { $srv->get($path, headers => {@headers})->{content} // '' };
my %env = sub {
    map { /\A([^=]+)=(.*)\z/ ? ($1 => $2) : () } split /\n/, shift;
    }
    ->(
    do { local (@ARGV, $/) = "$dir/startup.env"; <> }
    );

is_deeply [map { $env{$_} } qw(SITE_NAME HELPER_SECRET MOD_PERL_API_VERSION)],
    ['site', 's3cret', 2],
    'start-up code sees the server level\'s PerlSetEnv and PerlPassEnv, and the API version';
ok !exists $env{OTHER_SECRET} && !exists $env{HOME},
    '  and nothing else perennial was started with';
ok exists $env{PATH}, '  but PATH';

my $script = $get->('/perl/env.pl?alice=1', Cookie => 'session=alice');
like $script,   qr/^QUERY_STRING=alice=1$/m, 'a Registry script sees its request\'s variables';
like $script,   qr/^SITE_NAME=site$/m,       '  the PerlSetEnv ones';
like $script,   qr/^FROM_STARTUP=kept$/m,    '  what start-up code set';
unlike $script, qr/OTHER_SECRET|^HOME=/m,    '  and none of the starting environment';
unlike $get->('/perl/child.pl'),  qr/OTHER_SECRET/, 'nor does a process it starts';
unlike $get->('/cgi-bin/env.pl'), qr/OTHER_SECRET/, 'nor a mod_cgi script';

$get->('/perl/env.pl?alice=1', Cookie => 'session=alice');
my $handler = $get->('/h?bob');
like $handler,   qr/^LOC_VAR=here$/m,         'a handler sees its section\'s PerlSetEnv';
like $handler,   qr/^SITE_NAME=site$/m,       '  the server level\'s';
like $handler,   qr/^HELPER_SECRET=s3cret$/m, '  and PerlPassEnv\'s, after a script request too';
unlike $handler, qr/alice|OTHER_SECRET/,      '  none of the script request\'s variables';

$get->('/perl/env.pl?alice=1', Cookie => 'session=alice');
my $app = $get->('/app?bob');
unlike $app, qr/alice/,             'a PSGI application after a script sees none of its client\'s';
like $app,   qr/^SITE_NAME=site$/m, '  and the server level\'s PerlSetEnv';
like $get->('/perl/env.pl'), qr/^SITE_NAME=site$/m, 'and a script after them its own again';

# A log handler after a request that set no CGI variables (a file's) sees none of the script
# request's before it
$get->('/perl/env.pl?alice=1', Cookie => 'session=alice');
is $get->('/files/page.txt'), "a page\n", 'a file with a log handler';
ok wait_until(sub { -s "$dir/log_env.txt" }, 10, 'log handler'), '  which ran';
is do { local (@ARGV, $/) = "$dir/log_env.txt"; <> }, "QUERY_STRING= HTTP_COOKIE=\n",
    '  and saw no variable of the script request before it';

# A graceful restart reads the configuration's ${NAME} and PerlPassEnv from what perennial was
# started with
my @old = $srv->pids;
$srv->signal('USR1');
$srv->wait_replaced(\@old, 1);
like $get->('/h'), qr/^HELPER_SECRET=s3cret$/m, 'after a graceful restart, the same';
like $get->('/perl/env.pl'), qr/^FROM_MODULE=set$/m,
    '  and what a module set as it loaded, which the restart does not load again';
like $get->('/app'), qr/^PLACK_ENV=\w+$/m, '  and PLACK_ENV, which perennial sets as plackup does';

# A PerlPassEnv taken out of the configuration: after a graceful restart, its variable is gone
my $conf = do { local (@ARGV, $/) = $srv->conf; <> };
write_file($srv->conf, $conf =~ s/^PerlPassEnv HELPER_SECRET\n//mr);
@old = $srv->pids;
$srv->signal('USR1');
$srv->wait_replaced(\@old, 1);
unlike $get->('/perl/env.pl'), qr/HELPER_SECRET/,
    'a PerlPassEnv taken out: gone after a graceful restart';
like $get->('/perl/env.pl'), qr/^FROM_MODULE=set$/m, '  and what a module set stays';
$srv->stop;

# A PSGI application named on the command line, plackup's way, keeps what it was started with,
# as under plackup and Starman, where applications read their settings from it
my $plack = start_server(workers => 1, args => ["$dir/env.psgi"]);
like $plack->get('/')->{content}, qr/^OTHER_SECRET=hidden$/m,
    'perennial serve app.psgi: the application sees the environment it was started with';
$plack->stop;
done_testing;
