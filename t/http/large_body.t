use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(raw_request start_server);

# Bodies past 64 KiB go to a temporary file as they arrive, Content-Length and chunked alike
my $srv  = start_server(app => 'digest.psgi', workers => 1);
my $body = join '', map { chr(($_ * 7) % 256) } 1 .. 3_000_000;
my $sum  = unpack '%32C*', $body;

my $out = raw_request(
    $srv->port,
    "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: "
        . length($body)
        . "\r\n\r\n$body",
    timeout => 20
);
like $out, qr/\r\n\r\nlength 3000000 sum $sum file 1\z/,
    'Content-Length body arrives whole, from a file';

my $chunked = join '', map { sprintf("%x\r\n", length $_) . "$_\r\n" } unpack '(a100000)*', $body;
$out = raw_request(
    $srv->port,
    "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
        . $chunked
        . "0\r\n\r\n",
    timeout => 20
);
like $out, qr/\r\n\r\nlength 3000000 sum $sum file 1\z/, 'chunked body too';

$out = raw_request($srv->port,
    "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nsmall");
like $out, qr/\r\n\r\nlength 5 sum \d+ file 0\z/, 'small bodies stay in memory';
$srv->stop;
done_testing;
