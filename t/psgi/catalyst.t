use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use Cwd             qw(abs_path);
use Perennial::Test qw(start_server);

# A Catalyst application (Debian's libcatalyst-perl) mounted at a <Location>: Catalyst reads
# SCRIPT_NAME and PATH_INFO when its delayed response runs, so it routes by the path below the
# mount and makes its links with the mount in front, as under Plack::App::URLMap
eval { require Catalyst; 1 }
    or plan skip_all => 'Catalyst is not installed (make test installs it)';

my $psgi = abs_path("t/psgi/catalyst/cat.psgi");
my $srv  = start_server(workers => 2, conf => <<"CONF");
<Location /cat>
    SetHandler psgi
    PSGIApp $psgi
</Location>
CONF
my $base = 'http://127.0.0.1:' . $srv->port;
my $ua   = HTTP::Tiny->new(timeout => 20, keep_alive => 0, max_redirect => 0);

my $res = $ua->get("$base/cat/");
is $res->{status}, 200, 'the index';
is $res->{content}, "index; base $base/cat/; link $base/cat/hello/bob\n",
    'its base and the links it makes have the mount in front';
is $ua->get("$base/cat/hello/alice")->{content}, "hello alice; path hello/alice\n",
    'an action routed by the path below the mount';

# The mount without its slash: Catalyst routes SCRIPT_NAME and PATH_INFO joined, so "/cat" is
# its path "cat", as under Plack::App::URLMap
is $ua->get("$base/cat")->{content}, "default page; path cat\n", 'the mount without its slash';

$res = $ua->get("$base/cat/no/such/page");
is $res->{status},  404,                                 'a path with no action';
is $res->{content}, "default page; path no/such/page\n", 'goes to the default action';

$res = $ua->get("$base/cat/redirect");
is $res->{status},            302,                     'a redirect';
is $res->{headers}{location}, "$base/cat/hello/there", 'to a link under the mount';

$res = $ua->post_form("$base/cat/echo", {b => 2, a => 'x y'});
is $res->{content}, "echo a=x y,b=2\n", 'a posted form';

$res = $ua->get("$base/cat/stream");
is $res->{content}, join('', map {"part $_; path stream\n"} 1 .. 3),
    'a streamed answer, written after the response began';

is $ua->get("$base/cat/logged")->{content}, "logged\n", 'an action that logs';
like $srv->error_log, qr/caf\x{c3}\x{a9} \x{e2}\x{98}\x{ba} logged/,
    'its wide characters reach the error log as UTF-8';

is $ua->get("$base/nothing")->{status}, 404, 'outside the mount: not the application';

$srv->stop;

# With no ErrorLog the log is the server's stderr, where Catalyst's layer is pushed too
$srv = start_server(workers => 1, log_on_stderr => 1, conf => <<"CONF");
<Location /cat>
    SetHandler psgi
    PSGIApp $psgi
</Location>
CONF
$base = 'http://127.0.0.1:' . $srv->port;
is $ua->get("$base/cat/logged")->{content},  "logged\n", 'with no ErrorLog, an action that logs';
is $ua->get("$base/cat/hello/x")->{content}, "hello x; path hello/x\n", 'and the server goes on';
like $srv->error_log, qr/caf\x{c3}\x{a9} \x{e2}\x{98}\x{ba} logged/, 'its line is on stderr';
$srv->stop;
done_testing;
