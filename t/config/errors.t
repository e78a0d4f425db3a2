use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Config;
use Perennial::Test qw(perennial scratch_dir write_file);

my $dir = scratch_dir();

sub conf_file ($text) { write_file("$dir/test.conf", $text) }

subtest 'SetEnvIf and BrowserMatch rules it cannot read' => sub {
    my $file = conf_file(<<'CONF');
Listen 127.0.0.1:1
SetEnvIf ^X-.* x y
BrowserMatch "(unclosed" bot
SetEnvIf User-Agent bot
SetEnvIf User-Agent bot !gone=1
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 2: SetEnvIf: attribute '\^X-\.\*' is not a header's name/,
        'a regex of header names';
    like $out, qr/test\.conf line 3: BrowserMatch: bad regex '\(unclosed'/, 'a bad regex';
    like $out,
        qr/test\.conf line 4: SetEnvIf takes an attribute, a regex and at least one variable/,
        'no variable';
    like $out, qr/test\.conf line 5: SetEnvIf: '!gone=1': a variable to unset takes no value/,
        'an unset with a value';
};

subtest 'every error is reported with file, line and reason' => sub {
    my $file = conf_file(<<'CONF');
# comment
StartServers many
KeepAlive maybe
Frobnicate 1
<Location /x>
  SetHandler psgi
</Location>
MaxClients 0
CustomLog access.log "%h %Z"
<Location /y>
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 2: StartServers must be a whole number, got 'many'/, 'bad number';
    like $out, qr/test\.conf line 3: KeepAlive must be On or Off, got 'maybe'/,        'bad switch';
    like $out, qr/test\.conf line 4: unknown directive 'Frobnicate'/, 'unknown directive';
    like $out, qr/test\.conf line 5: <Location \/x> with SetHandler psgi needs PSGIApp/,
        'incomplete location';
    like $out, qr/test\.conf line 8: MaxClients must be a positive integer, got '0'/,
        'zero MaxClients';
    like $out, qr/test\.conf line 9: unknown LogFormat directive %Z/, 'log format';
    like $out, qr/test\.conf line 10: <Location> is never closed/,    'unclosed section';

    ($out, $code) = perennial('serve', '-c', $file);
    is $code, 1, 'serve refuses to start';
    like $out, qr/unknown directive 'Frobnicate'/, 'with the same errors';
};

subtest 'a PSGIApp that does not exist is an error with its line' => sub {
    my $file = conf_file("<Location />\n  SetHandler psgi\n  PSGIApp nowhere.psgi\n</Location>\n");
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 1: PSGIApp 'nowhere\.psgi' not found \(\Q$dir\E\/nowhere\.psgi\)/,
        'names the file, the line and where it looked';
    ($out, $code) = perennial('configtest', '-c', conf_file(<<'CONF'));
Listen 127.0.0.1:8999
<VirtualHost *:8999>
  ServerName a.test
  Alias /x nowhere-dir
  <Location /app>
    SetHandler psgi
    PSGIApp elsewhere.psgi
  </Location>
</VirtualHost>
CONF
    like $out, qr/test\.conf line 5: PSGIApp 'elsewhere\.psgi' not found/, 'in a virtual host too';
};

subtest 'an Alias to what is not there is a warning, as Apache starts without it' => sub {
    my ($out, $code) = perennial('configtest', '-c', conf_file(<<'CONF'));
Listen 127.0.0.1:8999
<VirtualHost *:8999>
  ServerName a.test
  Alias /x nowhere-dir
</VirtualHost>
CONF
    is $code, 0, 'configtest passes';
    like $out,
        qr{test\.conf line 4: '\Q$dir\E/nowhere-dir' not found: /x answers 404 until it is there},
        'and says what will happen';
};

subtest 'a good file passes, with Apache defaults and names' => sub {
    my $file = conf_file(<<'CONF');
Listen 127.0.0.1:0
Listen [::1]:0
MaxRequestWorkers 40
MaxConnectionsPerChild 500
MinSpareServers 5
MaxSpareServers 3
KeepAliveTimeout 1500ms
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 0, 'configtest passes';
    like $out, qr/Syntax OK/, 'says so';
    my $c = Perennial::Config->load(file => $file);
    is $c->max_clients, 40, 'MaxRequestWorkers is MaxClients';
    is $c->max_clients_directive, 'MaxRequestWorkers',
        'and the name the file used is kept for messages';
    is $c->max_requests_per_child, 500, 'MaxConnectionsPerChild is MaxRequestsPerChild';
    is $c->max_spare_servers,  6,   'MaxSpareServers raised to MinSpareServers + 1, as Apache does';
    is $c->keep_alive_timeout, 1.5, 'ms suffix';
    is_deeply $c->listen, ['127.0.0.1:0', '[::1]:0'], 'Listen repeats';
    is $c->start_servers,           5,   'StartServers default';
    is $c->server_limit,            256, 'ServerLimit default';
    is $c->listen_backlog,          511, 'ListenBacklog default';
    is $c->timeout,                 60,  'Timeout default';
    is $c->max_keep_alive_requests, 100, 'MaxKeepAliveRequests default';
};

subtest 'command-line flags override the file and are checked too' => sub {
    my $file = conf_file("MaxClients 10\n");
    my $c    = Perennial::Config->load(file => $file, overrides => {max_clients => 3});
    is $c->max_clients, 3, 'flag wins';
    my ($out, $code) = perennial('configtest', '-c', $file, '--max-clients', 'x');
    isnt $code, 0, 'a bad flag value fails';
    ($out, $code) = perennial('configtest', '-c', $file, '--timeout', 'soon');
    like $out, qr/--timeout must be a number of seconds, got 'soon'/, 'named by its flag';
};

subtest 'new() refuses unknown keys and names the valid ones' => sub {
    my $err = eval { Perennial::Config->new(max_client => 3); 1 } ? '' : $@;
    like $err, qr/Unknown config key\(s\) max_client; valid keys: .*max_clients/, 'typo caught';
    my $c = Perennial::Config->new(max_clients => 4);
    my $d = $c->with(max_clients => 8);
    is $c->max_clients, 4, 'with() leaves the original alone';
    is $d->max_clients, 8, 'and returns a changed copy';
};
subtest 'worker-life directives are checked too' => sub {
    my $file = conf_file(<<'CONF');
RequestDeadline soon
<Location /x>
  SlowRequestTime -1
</Location>
MaxUnsharedSize lots
MaxLifetimeJitter abc
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 1: RequestDeadline must be a number of seconds, got 'soon'/,
        'a server-wide deadline';
    like $out,
        qr/test\.conf line 3: SlowRequestTime must be a number of seconds \(0: off\), got '-1'/,
        'a location setting';
    like $out, qr/test\.conf line 5: MaxUnsharedSize must be a size in KB, or with K, M or G/,
        'a size';
    like $out, qr/test\.conf line 6: MaxLifetimeJitter must be a number or a percentage/,
        'a jitter';
    ($out, $code) = perennial('configtest', '-c', conf_file("PerlPreloadScripts $dir/none\n"));
    like $out, qr/PerlPreloadScripts: directory '\Q$dir\E\/none' not found/, 'a missing directory';
};

subtest 'what can only refuse stands in a RequireAll, as Apache says' => sub {
    my $file = conf_file(<<'CONF');
<Location /a>
  Require not ip 10.0.0.1
</Location>
<Location /b>
  <RequireNone>
    Require ip 10.0.0.1
  </RequireNone>
</Location>
<Location /c>
  <RequireAll>
    Require all granted
    <RequireNone>
      Require not ip 10.0.0.1
    </RequireNone>
    <RequireAny>
      Require local
      <RequireNone>
        Require ip 10.0.0.2
      </RequireNone>
    </RequireAny>
  </RequireAll>
</Location>
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 2: a negated Require has no effect outside <RequireAll>/,
        'Require not directly in a section';
    like $out, qr/test\.conf line 5: <RequireNone> has no effect outside <RequireAll>/,
        'RequireNone directly in a section';
    like $out, qr/test\.conf line 13: a negated Require has no effect in <RequireNone>/,
        'Require not inside RequireNone';
    like $out, qr/test\.conf line 17: <RequireNone> has no effect outside <RequireAll>/,
        'RequireNone inside RequireAny';
    my $good = conf_file(<<'CONF');
<Location /d>
  <RequireAll>
    Require all granted
    Require not ip 10.0.0.1
    <RequireNone>
      Require ip 10.0.0.2
    </RequireNone>
  </RequireAll>
</Location>
CONF
    ($out, $code) = perennial('configtest', '-c', $good);
    is $code, 0, 'both inside a RequireAll pass' or diag $out;
};

subtest 'directives with no meaning here, in sections and hosts as Apache takes them' => sub {
    my $file = conf_file(<<'CONF');
Listen 127.0.0.1:8999
<Directory /srv>
    IndexOptions FancyIndexing
    FileETag None
</Directory>
<VirtualHost *:8999>
    ServerName a.test
    AddLanguage en .en
    <Location />
        AddOutputFilterByType DEFLATE text/html
    </Location>
</VirtualHost>
CONF
    my ($out, $code) = perennial('configtest', '-c', $file);
    is $code, 0, 'configtest passes' or diag $out;
    like $out, qr/accepted and ignored: .*AddLanguage \(\S+ line 8\): no content negotiation/,
        'a host\'s are listed with the server\'s';
    like $out, qr/AddOutputFilterByType \(\S+ line 10\): output filters/, 'a section\'s too';
    like $out, qr/IndexOptions \(\S+ line 3\): Perennial makes no directory listings/,
        'with their reason';
    ($out, $code)
        = perennial('configtest', '-c',
        conf_file("<Directory /srv>\n  Mutex default\n</Directory>\n"));
    is $code, 1, 'one of the whole server\'s in a section fails';
    like $out, qr/test\.conf line 2: Mutex is not allowed inside a section/, 'with its line';
};

subtest 'a word Apache does not know is an error' => sub {
    my ($out, $code)
        = perennial('configtest', '-c',
        conf_file("ServerSignature Bogus\nServerTokens Everything\n"));
    is $code, 1, 'configtest fails';
    like $out, qr/test\.conf line 1: ServerSignature must be On, Off or EMail, got 'Bogus'/,
        'ServerSignature';
    like $out, qr/test\.conf line 2: ServerTokens must be Prod, Major, Minor, Min, OS or Full/,
        'ServerTokens';
    ($out, $code)
        = perennial('configtest', '-c',
        conf_file("ServerSignature EMail\nServerTokens ProductOnly\n"));
    is $code, 0, 'their own words pass' or diag $out;
};

done_testing;
