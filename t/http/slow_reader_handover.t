use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Time::HiRes     ();
use Perennial::Test qw(files_and_app raw_request start_server wait_until);

# A client that reads a large response slowly does not keep its worker: after a second the rest
# goes to the parking process, which writes it as the client takes it. Nothing of it is lost.
# Both ways a body leaves: bytes from memory (an application's array, spooled to a file for
# the parking process) and a static file (the file itself goes). (t/http/slow_reader.t: a
# worker's own writing to a slow reader, bounded by Timeout.)
my $srv = start_server(
    workers => 1,
    conf    =>
        <<"CONF" . files_and_app({'huge.bin' => 'f' x (48 << 20), 'small.txt' => "small\n"}, 'huge.psgi'));
StartServers 1
MinSpareServers 1
MaxSpareServers 1
MaxClients 1
CONF

for my $path ('/app', '/huge.bin') {
    my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
    my $first = '';
    sysread($slow, $first, 1000);
    like $first, qr{\AHTTP/1\.1 200 OK}, "$path: the slow reader gets the start of its response";
    ok wait_until(
        sub { $srv->error_log =~ /response handed to the parking process.*GET \Q$path\E,/ },
        10, 'handed'),
        '  after a second the rest goes to the parking process, and the log says so';
    like raw_request($srv->port, "GET /small.txt HTTP/1.0\r\n\r\n", timeout => 10),
        qr{\AHTTP/1\.[01] 200 .*\r\n\r\nsmall\n\z}s,
        '  the one worker serves another client meanwhile';

    # The slow reader takes the rest, every byte, and asks again on the same connection
    my ($got, $deadline)
        = (length($first) - index($first, "\r\n\r\n") - 4, Time::HiRes::time() + 30);
    while ($got < 48 << 20 && Time::HiRes::time() < $deadline) {
        my $want = (48 << 20) - $got;
        my $n    = sysread($slow, my $buf, $want < 1 << 20 ? $want : 1 << 20);
        last unless $n;
        $got += $n;
    }
    is $got, 48 << 20, '  the slow reader got the whole response';
    $slow->syswrite("GET /small.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $next = '';
    while (sysread($slow, $next, 4096, length $next)) { }
    like $next, qr{\AHTTP/1\.1 200 .*\r\n\r\nsmall\n\z}s,
        '  and its next request on the same connection is answered';
}
like $srv->error_log,
    qr/the client takes it slowly: \d+ bytes left of it \(request GET \/app, client 127\.0\.0\.1\)/,
    'the log gives what was left, the request and the client';
$srv->stop;

# Turned off, the worker writes to its slow reader itself, as before
$srv = start_server(app => 'huge.psgi', workers => 1, conf => "ParkSlowReaders Off\n");
my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
$slow->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
sysread($slow, my $first, 1000);
ok wait_until(sub { $srv->scoreboard eq 'W' }, 5, 'writing'),
    'ParkSlowReaders Off: its worker writes';
select undef, undef, undef, 1.5;
unlike $srv->error_log, qr/response handed/, 'and does not hand it over';
$srv->stop;

done_testing;
