use v5.36;
use lib 't/lib';
use Test::More;
use Cwd        qw(getcwd);
use File::Temp qw(tempdir);
use IO::Socket::UNIX;
use Socket          qw(SOCK_DGRAM);
use Perennial::Test qw(http_request slurp start_program start_server wait_until serves);

# What systemd gives a service and expects of it: the readiness protocol (Type=notify:
# READY=1 once the workers serve, RELOADING=1 and READY=1 around a graceful restart, STOPPING=1),
# spoken to a socket of the test's own; and socket activation, under systemd's own
# systemd-socket-activate: the sockets it passes are the listeners, without --listen. Neither
# variable reaches an application.

my $root = getcwd();
my $dir  = tempdir(CLEANUP => 1);
my $path = "$dir/notify";
my $sock = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $path) or die "Can't bind $path: $!";

# The next datagram that matches, within 15 s; else what came
my $said = sub ($want) {
    my @got;
    my $until = time + 15;
    while (time < $until) {
        my $in = '';
        vec($in, fileno $sock, 1) = 1;
        select(my $out = $in, undef, undef, 0.5) or next;
        defined recv($sock, my $msg, 4096, 0)    or next;
        return $msg if $msg =~ $want;
        push @got, $msg;
    }
    return join ' | ', 'not said; said:', @got;
};

my $srv = do {
    local $ENV{NOTIFY_SOCKET} = $path;
    start_server(workers => 2, app => 'process_env.psgi');
};
my $ready = $said->(qr/READY=1/);
like $ready, qr/\AMAINPID=(\d+)\nREADY=1\nSTATUS=serving on 127\.0\.0\.1:\d+\z/,
    'READY=1 once the workers serve, with the main pid and a status';
is + ($ready =~ /MAINPID=(\d+)/)[0], $srv->pid, 'the manager\'s pid';
is $srv->get('/')->{content},        "none\n",  'NOTIFY_SOCKET does not reach the application';

$srv->signal('USR1');
like $said->(qr/RELOADING=1/), qr/\ARELOADING=1\nSTATUS=reading the configuration again\z/,
    'a graceful restart: RELOADING=1';
like $said->(qr/READY=1/), qr/READY=1/, 'then READY=1';
$srv->signal('TERM');
like $said->(qr/STOPPING=1/), qr/\ASTOPPING=1\nSTATUS=stopping\z/, 'a stop: STOPPING=1';
$srv->wait_exit;

SKIP: {
    my ($activate) = grep {-x} map {"$_/systemd-socket-activate"} split /:/, $ENV{PATH};
    skip 'systemd-socket-activate is not installed (Debian package systemd)', 6 unless $activate;
    my $log = "$dir/error.log";
    my ($pid, $port) = start_program(
        sub ($port) {
            (   $activate,            '-l',
                "127.0.0.1:$port",    '-E',
                'PATH',               $^X,
                "-I$root/lib",        "$root/bin/perennial",
                'serve',              '--workers',
                1,                    '--error-log',
                $log,                 '--pid',
                "$dir/activated.pid", "$root/t/psgi/process_env.psgi"
            );
        },
        sub ($port) { serves($port) },
        "$dir/activate.out"
    );
    ok $pid, 'started by systemd-socket-activate, on its first connection';
    like slurp($log), qr/listening on 127\.0\.0\.1:$port /, 'on the socket it was passed';
    is http_request($port, 'GET', 'localhost', '/')->{body}, "none\n",
        'LISTEN_FDS and LISTEN_PID do not reach the application';
    kill 'USR1', $pid;
    ok wait_until(sub { slurp($log) =~ /generation 2 started/ }, 15, 'reloaded'),
        'a graceful restart';
    is http_request($port, 'GET', 'localhost', '/')->{status}, 200, 'serves on the same socket';
    unlike slurp($log), qr/Listen changed/, 'with no word of Listen having changed';
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

done_testing;
