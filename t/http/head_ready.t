use v5.36;
use Test::More;
use Perennial::HTTP::Request qw(head_ready parse_head);

# When a head still arriving is parsed: once its request line is in (so a bad one is refused at
# once), once its end is, or once a line or their number is past a limit; never again from its
# start for each piece that trickles in
my $limits = {line => 100, fields => 3, field_size => 40};
my $ready  = sub (@pieces) {
    my ($buf, %scan) = ('');
    return map { $buf .= $_; head_ready(\$buf, \%scan, $limits) ? 1 : 0 } @pieces;
};
is_deeply [$ready->('GET / HT', "TP/1.1\r\n", 'Host: x', "\r\n", "X-A: 1\r\n", "\r\n")],
    [0, 1, 0, 0, 0, 1], 'the request line, then nothing until the empty line';
is_deeply [$ready->("GET / HTTP/1.1\n", "Host: x\n", "\n")], [1, 0, 1], 'with bare line ends too';
is_deeply [$ready->("GET / HTTP/1.1\r\n", 'X-Long: ' . ('a' x 40))], [1, 1],
    'a field past LimitRequestFieldSize, before its end';
is_deeply [$ready->("GET / HTTP/1.1\r\n", "A: 1\r\nB: 2\r\nC: 3\r\n", "D: 4\r\n")], [1, 0, 1],
    'more fields than LimitRequestFields';
is_deeply [$ready->('GET /' . ('x' x 60), 'x' x 60)], [0, 1],
    'a request line past LimitRequestLine';

# What parse_head makes of a head that arrived in pieces is what it makes of it whole
my ($buf, %scan, %env) = ('');
my $head = "GET /p?q=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n";
my $len  = 0;
for my $piece (unpack '(a3)*', $head) {
    $buf .= $piece;
    $len = parse_head(\$buf, \%env, {line => 8190, fields => 100, field_size => 8190})
        if head_ready(\$buf, \%scan, $limits);
}
is $len,           length $head, 'the whole head, once its end came';
is $env{HTTP_X_A}, 1,            'with its fields';
done_testing;
