use v5.36;
use lib 't/lib';
use IO::Socket::IP;
use POSIX ();
use Test::More;
use Perennial::HTTP::Core;
use Perennial::Test qw(raw_request start_server);

# Each worker waits on an epoll of its own, in which the listener is exclusive: Linux wakes one
# waiting process for a new connection. One that is woken and leaves without accepting (a
# worker that stops or is killed just then) must not leave the connection waiting for the next
# one's wakeup: an idle worker looks at the listeners once a second (Perennial::Server's
# _left_ready). Here the test's own process is the one that is woken and leaves: its waiter on
# the listener, made before the server's worker made its own, is the first that Linux wakes.

plan skip_all => 'the C functions are not built'
    unless Perennial::HTTP::Core::implementation() eq 'C';

my $listen = IO::Socket::IP->new(
    LocalHost => '127.0.0.1',
    LocalPort => 0,
    Listen    => 128,
    ReuseAddr => 1
) or die "Can't listen: $@";
my $port   = $listen->sockport;
my $waiter = Perennial::HTTP::Core::xs_waiter([$listen]) or die "Can't make a waiter: $!";
my $srv    = start_server(listen => $listen, app => 'pid.psgi', workers => 1);

pipe(my $from_kid, my $to_parent) or die "pipe: $!";
my $kid = fork // die "Can't fork: $!";
if (!$kid) {
    close $from_kid;
    syswrite $to_parent, "waiting\n";
    my $ready;
    $ready = Perennial::HTTP::Core::xs_next_ready($waiter) until defined $ready;
    syswrite $to_parent, "woken for handle $ready\n";
    POSIX::_exit(0);    # Without accepting: the connection stays in the listener's queue
}
close $to_parent;
is scalar(readline $from_kid), "waiting\n", 'the first waiter is about to wait';
sleep 1;                # Into its epoll_wait, before the connection comes

my $out = raw_request($port, "GET / HTTP/1.0\r\n\r\n", timeout => 20);
like $out, qr{\AHTTP/1\.[01] 200 }, 'the connection it was woken for and left is answered';

# (Had it not been waiting yet, the worker would have been woken, and it would wait on: its
# report is waited for 10 s at most, and it is stopped either way)
my $rin = '';
vec($rin, fileno $from_kid, 1) = 1;
my $report = select(my $rout = $rin, undef, undef, 10) > 0 ? readline $from_kid : 'nothing';
is $report, "woken for handle 0\n", 'the first waiter was woken for it';
kill 'KILL', $kid;
waitpid $kid, 0;

# And the next ones as usual
like raw_request($port, "GET / HTTP/1.0\r\n\r\n"), qr{\AHTTP/1\.[01] 200 }, 'the next too';
$srv->stop;
done_testing;
