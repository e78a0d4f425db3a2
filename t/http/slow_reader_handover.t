use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Time::HiRes ();
use Perennial::Test
    qw(files_and_app raw_request scratch_dir script_location start_server wait_until write_file);

# A script printing 48 MB in pieces, resident (Registry) and forked (CGI)
sub scripts () {
    my $dir = scratch_dir();
    write_file("$dir/pieces.pl", <<'PL', 0755);
#!/usr/bin/perl
$| = 1;
print "Content-Type: text/plain\r\n\r\n";
print sprintf('%08d', $_) x 8192 for 0 .. 767;
PL
    return script_location('/registry', $dir) . script_location('/cgi', $dir, 'cgi-script');
}

# A client that reads a large response slowly does not keep its worker: after a second the rest
# goes to the parking process, which writes it as the client takes it. Nothing of it is lost.
# Every way a body leaves: bytes from memory (an application's array, spooled to a file for
# the parking process), a static file (the file itself goes), a stream through the writer and
# a body read with getline (spooled as the application makes it, then handed over when it
# ends). (t/http/slow_reader.t: a worker's own writing to a slow reader, bounded by Timeout.)
my $srv = start_server(
    workers => 1,
    conf    =>
        <<"CONF" . files_and_app({'huge.bin' => 'f' x (48 << 20), 'small.txt' => "small\n"}, 'huge.psgi'));
StartServers 1
MinSpareServers 1
MaxSpareServers 1
MaxClients 1
${\ scripts()}
CONF

my $PIECE = 65_536;

# What a slow reader reads after the first bytes of its response, as fast as it can now: the
# head's end, then $raw bytes of body as they came on the wire (a chunked one with its framing),
# or without $raw, a chunked body to its last chunk
sub rest_of ($sock, $first, $raw = undef) {
    my $body     = substr $first, index($first, "\r\n\r\n") + 4;
    my $deadline = Time::HiRes::time() + 30;
    while (Time::HiRes::time() < $deadline) {
        last if defined $raw ? length $body >= $raw : $body =~ /\r\n0\r\n\r\n\z/;
        my $want = defined $raw ? $raw - length $body : 1 << 20;
        last unless sysread($sock, $body, $want < 1 << 20 ? $want : 1 << 20, length $body);
    }
    return $body;
}

# A chunked body of 64 KiB pieces, each its number over and over: the count of pieces that came
# whole and in their place (-1 when anything else came)
sub pieces_in_order ($chunked) {
    my ($body, $i) = ('', 0);
    while ($chunked =~ /\G([0-9a-f]+)\r\n/gc) {
        my $size = hex $1 or last;
        $body .= substr $chunked, pos $chunked, $size;
        pos($chunked) += $size + 2;
    }
    $i++ while substr($body, $i * $PIECE, $PIECE) eq sprintf('%08d', $i) x 8192;
    return length $body == $i * $PIECE ? $i : -1;
}

my %case = (
    '/app'                => ['an array body',            48 << 20, 'x'],
    '/huge.bin'           => ['a static file',            48 << 20, 'f'],
    '/app/stream'         => ['a stream (the writer)',    768 * ($PIECE + 9) + 5],
    '/app/lines'          => ['a body read with getline', 768 * ($PIECE + 9) + 5],
    '/registry/pieces.pl' => ['a resident script\'s output'],
    '/cgi/pieces.pl'      => ['a CGI script\'s output'],
);
for my $path ('/app', '/huge.bin', '/app/stream', '/app/lines', '/registry/pieces.pl',
    '/cgi/pieces.pl')
{
    my ($what, $raw, $byte) = @{$case{$path}};
    my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
    my $first = '';
    sysread($slow, $first, 1000);
    like $first, qr{\AHTTP/1\.1 200 OK}, "$what: the slow reader gets the start of its response";
    ok wait_until(
        sub { $srv->error_log =~ /response handed to the parking process.*GET \Q$path\E,/ },
        10, 'handed'),
        '  after a second the rest goes to the parking process, and the log says so';
    like raw_request($srv->port, "GET /small.txt HTTP/1.0\r\n\r\n", timeout => 10),
        qr{\AHTTP/1\.[01] 200 .*\r\n\r\nsmall\n\z}s,
        '  the one worker serves another client meanwhile';

    # The slow reader takes the rest, every byte, and asks again on the same connection
    my $body = rest_of($slow, $first, $raw);
    if ($byte) { is $body, $byte x $raw, '  the slow reader got the whole response' }
    else       { is pieces_in_order($body), 768, '  the slow reader got every piece, in order' }
    $slow->syswrite("GET /small.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $next = '';
    while (sysread($slow, $next, 4096, length $next)) { }
    like $next, qr{\AHTTP/1\.1 200 .*\r\n\r\nsmall\n\z}s,
        '  and its next request on the same connection is answered';
}
like $srv->error_log,
    qr/the client takes it slowly: \d+ bytes left of it \(request GET \/app, client 127\.0\.0\.1\)/,
    'the log gives what was left, the request and the client';

# A slow reader that sent its next request with the first (pipelining) keeps its worker, which
# writes the rest itself and then serves that request from the bytes it read already: handed
# over, those bytes were lost, and the parking process read the next request's body as a
# request of its own (a request smuggled in a body)
{
    my $smuggled = "GET /small.txt?smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
    my $slow     = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"
            . "POST /small.txt?outer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            . 'Content-Length: '
            . length($smuggled)
            . "\r\n\r\n");
    sysread($slow, my $first, 1000);
    my $handed = () = $srv->error_log =~ /response handed to the parking process/g;
    select undef, undef, undef, 2.5;    # Past the second after which a rest is handed over
    $slow->syswrite($smuggled);
    my $rest = rest_of($slow, $first, 48 << 20);
    is $rest, 'f' x (48 << 20), 'pipelined after a slow read: the first response whole';
    my $after = '';
    while (sysread($slow, $after, 65_536, length $after)) { }
    my @statuses = $after =~ m{^HTTP/1\.1 (\d+)}mg;
    is scalar(@statuses), 1, '  then one response: the POST\'s, its body a body';
    is(() = $srv->error_log =~ /response handed to the parking process/g,
        $handed, '  the worker kept the connection to serve it');
    ok wait_until(sub { $srv->access_log =~ m{"POST /small\.txt\?outer HTTP/1\.1"} }, 10, 'logged'),
        '  the access log has the POST';
    unlike $srv->access_log, qr/\?smuggled/, '  and no request was read from its body';
}

# Logs reopened while the parking process writes to a slow reader: its successor takes the rest
# over from where it stood, and the reader gets every byte
{
    my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET /app/stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    sysread($slow, my $first, 1000);
    my $handed = () = $srv->error_log =~ /response handed to the parking process/g;
    ok wait_until(
        sub { (() = $srv->error_log =~ /response handed to the parking process/g) > $handed },
        10, 'handed'),
        'a slow reader\'s stream is handed over';
    my ($lot) = $srv->error_log =~ /.*parking process (\d+) started/s;
    my ($out, $code) = $srv->cli('reopen-logs', '-c', $srv->conf);
    is $code, 0, 'reopen-logs sent' or diag $out;
    ok wait_until(
        sub {
            $srv->error_log =~ /parking process $lot stopped: 1 connection\(s\) held, 1 put back/;
        },
        10,
        'put back'
        ),
        '  the parking process puts it back for its successor';
    is pieces_in_order(rest_of($slow, $first)), 768,
        '  which sends the rest: every piece, in order';
}

# A stream longer than a spool holds (64 MB): the worker sends what the spool holds itself when
# it is full, then writes on, and nothing is lost or reordered on the way
{
    my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET /app/stream?mb=96 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    sysread($slow, my $first, 1000);
    select undef, undef, undef, 2;
    is pieces_in_order(rest_of($slow, $first, 96 * 16 * ($PIECE + 9) + 5)), 96 * 16,
        'a stream of 96 MB to a slow reader: the client gets every piece, in order';
    ok wait_until(
        sub {
            $srv->error_log
                =~ /did not fit in a spool \(64 MB each, ParkSpoolLimit in all\): its worker wrote it itself \(request GET \/app\/stream\?mb=96,/;
        },
        10,
        'spool full'
        ),
        '  its worker wrote it itself once the spool held 64 MB, and the log says so';
}
$srv->stop;

# ParkSpoolLimit bounds what all spools hold on disk: a second slow reader whose rest would pass
# it keeps its worker, which writes the rest itself; the status page counts what is spooled
$srv = start_server(workers => 2, conf => <<"CONF" . files_and_app({}, 'huge.psgi'));
StartServers 2
MinSpareServers 2
MaxSpareServers 2
MaxClients 2
ParkSpoolLimit 60M
<Location /server-status>
    SetHandler server-status
</Location>
CONF
my @slow = map { IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@ } 1,
    2;
my @first;
my $spooled = sub {
    raw_request($srv->port, "GET /server-status?auto HTTP/1.0\r\n\r\n")
        =~ /^ParkedSpoolBytes: (\d+)$/m ? $1 : -1;
};
$slow[0]->syswrite("GET /app HTTP/1.1\r\nHost: x\r\n\r\n");
sysread($slow[0], $first[0], 1000);
ok wait_until(sub { $spooled->() > 40 << 20 }, 10, 'spooled'),
    'ParkSpoolLimit 60M: a first slow reader\'s rest is spooled, and server-status counts it';
$slow[1]->syswrite("GET /app HTTP/1.1\r\nHost: x\r\n\r\n");
sysread($slow[1], $first[1], 1000);

# Its worker looks for a spool a second after the socket stops taking the response: read from
# its start (the scoreboard's W), not from the client's, which a loaded machine can put before it
wait_until(sub { $srv->scoreboard =~ /W/ }, 10, 'the second worker writing');
select undef, undef, undef, 2.5;
is rest_of($slow[$_], $first[$_], 48 << 20), 'x' x (48 << 20), "  slow reader $_ gets all of it"
    for 1, 0;
ok wait_until(sub { $srv->error_log =~ /did not fit in a spool/ }, 10, 'no room'),
    '  the second one\'s would have passed it: its worker wrote it itself, and the log says so';
is(() = $srv->error_log =~ /response handed to the parking process/g,
    1, '  only the first was handed over');
ok wait_until(sub { $spooled->() == 0 }, 10, 'unspooled'),
    '  once sent, the spool is gone from the count';
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
