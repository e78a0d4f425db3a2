use v5.36;
use Test::More;
use File::Temp qw(tempfile);
use IO::Handle ();
use Socket     qw(AF_UNIX PF_UNSPEC SOCK_STREAM);
use Perennial::HTTP::Spool;
use Perennial::Scoreboard;

# A spool in process: what a slow reader has not taken, in a file, sent from an offset of its
# own while more is added at the end (Perennial::HTTP::Spool). The real process's use of it:
# t/http/slow_reader_handover.t.
plan skip_all => 'perl has no sendfile number (syscall.ph)'
    unless Perennial::HTTP::Spool::sendfile_number();

# A connection's two ends; the server's does not block, as when a worker sends from a spool
sub pair () {
    socketpair(my $server, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die $!;
    $server->blocking(0);
    return ($server, $client);
}

sub taken ($client, $want) {
    my $got = '';
    sysread($client, $got, $want - length $got, length $got) || last while length $got < $want;
    return $got;
}

my ($server, $client) = pair();
my $data  = 'head:' . ('a' x 10);
my $spool = Perennial::HTTP::Spool->of_bytes(\$data, 5);
is $spool->left, 10, 'bytes from memory: the rest from the offset given';
ok $spool->add('bcd'), 'more is added at its end';
is $spool->left,                           13, '  and counted';
is $spool->send_some($server),             13, 'the socket takes what it can at once';
is taken($client, 13), ('a' x 10) . 'bcd', '  in order';
is $spool->left,                           0, '  and nothing is left';
ok $spool->add('efg'), 'added after some went';
my ($file, $left) = $spool->to_hand;
is $left,                         3,     'handed over: what is still to go';
is sysread($file, my $rest, 100), 3,     '  the file stands at it';
is $rest,                         'efg', '  and holds it';
$spool->discard;

# A full socket: nothing goes, nothing is lost
($server, $client) = pair();
my $big = 'z' x (8 << 20);
$spool = Perennial::HTTP::Spool->of_bytes(\$big, 0);
my $sent = 0;
while (my $n = $spool->send_some($server)) { $sent += $n }
ok $sent > 0 && $sent < length $big, "a full socket takes part ($sent bytes)";
is $spool->send_some($server), 0,                    '  then nothing, without blocking';
is $spool->left,               length($big) - $sent, '  and the rest waits';
close $client;
local $SIG{PIPE} = 'IGNORE';    # As in a worker: sendfile(2) has no MSG_NOSIGNAL
is $spool->send_some($server), undef, 'a client gone: undef, and $! says why';
$spool->discard;

# A static file is its own spool, from where it stands; nothing is added to it
my ($fh, $name) = tempfile(UNLINK => 1);
print {$fh} '0123456789';
close $fh;
open($fh, '<', $name) or die $!;
sysseek($fh, 3, 0);
($server, $client) = pair();
$spool = Perennial::HTTP::Spool->of_file($fh, 5);
ok !$spool->add('x'), 'a static file takes nothing added';
is $spool->send_some($server), 5,       'a static file: its bytes from where it stood';
is taken($client, 5),          '34567', '  those and no others';
$spool->discard;

# A file shorter than it should be: -1
open($fh, '<', $name) or die $!;
$spool = Perennial::HTTP::Spool->of_file($fh, 20);
($server, $client) = pair();
is $spool->send_some($server), 10, 'a file shorter than its length: what it has';
is $spool->send_some($server), -1, '  then -1';
$spool->discard;

# ParkSpoolLimit: what the parking process holds (the scoreboard's count) and what a spool would
# hold together
my $board = Perennial::Scoreboard->create(slots => 1);
Perennial::HTTP::Spool::limit($board, 1000);
$board->spooled(900);
ok !Perennial::HTTP::Spool->of_bytes(\('y' x 200), 0), 'past ParkSpoolLimit: no spool';
$spool = Perennial::HTTP::Spool->of_bytes(\('y' x 100), 0);
ok $spool,            'within it: a spool';
ok !$spool->add('y'), '  which takes no byte past it';
$board->spooled(0);
ok $spool->add('y' x 500), '  and more once the parking process holds less';
ok !Perennial::HTTP::Spool->of_bytes(\('y' x (64 << 20 | 1)), 0), 'one response: 64 MB at most';
$spool->discard;

done_testing;
