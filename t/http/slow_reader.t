use v5.36;
use lib 't/lib';
use Test::More;
use Socket      qw(AF_INET IPPROTO_TCP SOCK_STREAM SOL_SOCKET SO_RCVBUF inet_aton pack_sockaddr_in);
use Time::HiRes ();
use Perennial::Test qw(files_and_app raw_request start_server wait_until);

# A client that reads the response a little at a time cannot hold the worker: Timeout bounds
# the write (of up to 64 KiB, and each further 64 KiB), not each partial write, which a reader
# that takes a kilobyte now and then would restart for ever. Both ways a body leaves: bytes
# written from memory (a PSGI application's) and a file sent by sendfile (a static file). This is
# the worker's own writing, as with ParkSlowReaders Off, for a static file and for a response's
# rest over 64 MB; t/http/slow_reader_handover.t has what the parking process takes over.
my $srv = start_server(
    workers => 1,
    conf    =>
        <<"CONF" . files_and_app({'big.bin' => 'f' x (20 << 20), 'small.txt' => "small\n"}, 'big.psgi'));
Timeout 3
ParkSlowReaders Off
CONF

# Asks for $path with a small receive buffer, then reads 1 KiB every 0.2 s until the server's
# log says it gave up, for 20 s at most; returns the bytes read
sub read_slowly ($path) {
    socket(my $sock, AF_INET, SOCK_STREAM, IPPROTO_TCP)                  or die "socket: $!";
    setsockopt($sock, SOL_SOCKET, SO_RCVBUF, 4096)                       or die "SO_RCVBUF: $!";
    connect($sock, pack_sockaddr_in($srv->port, inet_aton('127.0.0.1'))) or die "connect: $!";
    syswrite $sock, "GET $path HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my ($got, $until) = (0, Time::HiRes::time() + 20);
    while (Time::HiRes::time() < $until) {
        last if $srv->error_log =~ /response cut short.*\Q$path\E/;
        my $n = sysread $sock, my $part, 1024;
        last unless $n;
        $got += $n;
        Time::HiRes::sleep(0.2);
    }
    close $sock;
    return $got;
}

for my $path ('/app', '/big.bin') {
    my $got = read_slowly($path);
    cmp_ok $got, '<', 1 << 20, "$path: the slow reader got $got bytes, not all";
    like $srv->error_log,
        qr/response cut short, the client did not take the response within Timeout \(request GET \Q$path\E,/,
        '  the server gave up on it, and the log says why';
    my ($logged) = $srv->access_log =~ m{"GET \Q$path\E HTTP/1\.1" 200 (\d+)};
    cmp_ok $logged // 0, '<', 8 << 20, "  the access log counts the bytes that went ($logged)";
    my $out = raw_request($srv->port, "GET /small.txt HTTP/1.0\r\n\r\n", timeout => 5);
    like $out, qr{\AHTTP/1\.[01] 200 .*\r\n\r\nsmall\n\z}s,
        '  and the only worker serves the next client';
}
$srv->stop;
done_testing;
