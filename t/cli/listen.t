use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use IO::Socket::UNIX;
use Perennial::Test qw(scratch_dir wait_until);

# perennial binding its own listeners: TCP and a Unix socket at once, in one process (-X).
# As root, the one process keeps root (--user root) so that it can remove its socket file.
my $dir  = scratch_dir();
my $sock = "$dir/perennial.sock";
my $pid  = fork // die;
if (!$pid) {
    open STDERR, '>', "$dir/err" or die;
    exec $^X, '-Ilib', 'bin/perennial', '-X', '--user', 'root', '-l', '127.0.0.1:0', '-S', $sock,
        '--pid',
        "$dir/p.pid",
        't/psgi/pid.psgi';
}
ok wait_until(sub { -S $sock }, 10, 'unix socket'), 'Unix socket created';
my $c = IO::Socket::UNIX->new(Peer => $sock) or die $!;
$c->syswrite("GET / HTTP/1.0\r\n\r\n");
local $/;
like <$c>, qr{\AHTTP/1\.0 200 OK.*\r\n\r\n$pid\z}s,
    'served in the one process over the Unix socket';
my ($port) = do { open my $e, '<', "$dir/err"; local $/; <$e> }
    =~ /listening on 127\.0\.0\.1:(\d+)/;
ok $port, "TCP port logged ($port)";
is HTTP::Tiny->new->get("http://127.0.0.1:$port/")->{content}, $pid, 'and over TCP';
kill 'TERM', $pid;
waitpid $pid, 0;
is $?, 0, 'clean exit on TERM';
ok !-e $sock, 'socket file removed';
done_testing;
