use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(getcwd);
use File::Temp      qw(tempdir);
use Perennial::Test qw(http_request load_start load_stop slurp start_program wait_until serves);

# Hot deployment as Server::Starter users do it: start_server holds the port and runs
# perennial on it (SERVER_STARTER_PORT); HUP to start_server starts a new perennial, and once
# it is up the old one is asked to stop gracefully (--signal-on-hup=QUIT). Under load, no
# request fails.

my ($start_server) = grep {-x} map {"$_/start_server"} split /:/, $ENV{PATH};
plan skip_all => 'start_server is not installed (Debian package libserver-starter-perl)'
    unless $start_server;

my $root   = getcwd();
my $dir    = tempdir(CLEANUP => 1);
my $status = "$dir/status";
my ($pid, $port) = start_program(
    sub ($port) {
        (   $start_server,          "--port=127.0.0.1:$port",
            '--signal-on-hup=QUIT', '--signal-on-term=QUIT',
            '--interval=3',         "--status-file=$status",
            '--',                   $^X,
            "-I$root/lib",          "$root/bin/perennial",
            'serve',                '--workers',
            2,                      '--error-log',
            "$dir/error.log",       "$root/t/psgi/pid.psgi"
        );
    },
    sub ($port) { serves($port) },
    "$dir/start_server.log"
);
ok $pid, 'perennial serves under start_server';
like slurp("$dir/error.log"), qr/listening on 127\.0\.0\.1:$port /,
    'on the socket start_server holds (SERVER_STARTER_PORT), without --listen';
wait_until(sub { slurp($status) =~ /^1:\d+$/m }, 10, 'the status file');
my ($first) = slurp($status) =~ /^1:(\d+)$/m or BAIL_OUT('no status file from start_server');
ok $first, "start_server's first generation: $first";

my $load = load_start($port, clients => 3, seconds => 30);
sleep 1;
kill 'HUP', $pid;
ok wait_until(sub { slurp($status) =~ /^2:\d+$/m && !kill 0, $first }, 30, 'the old one gone'),
    'HUP: a new perennial started, and the old one stopped gracefully';
sleep 1;
my $sum = load_stop($load);
cmp_ok $sum->{ok}, '>', 0, "requests served during the handover: $sum->{ok}";
is $sum->{failed}, 0, 'none failed' or diag explain $sum->{why};
like slurp("$dir/error.log"), qr/manager $first stopped/, 'the old manager says it stopped';

kill 'TERM', $pid;
waitpid $pid, 0;
done_testing;
