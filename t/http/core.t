use v5.36;
use Test::More;
use Socket qw(AF_UNIX PF_UNSPEC SOCK_STREAM SOL_SOCKET SO_SNDBUF);
use Perennial::HTTP::Core;

# The hot path's C functions give what their Perl twins give, byte for byte, over every kind of
# response head: statuses with and without a body, both versions, HEAD, keep-alive wanted or
# not, the headers the server writes itself, line breaks, undefined values, an odd count,
# characters as Latin-1 and wider. (Every other test runs whichever `make` built; t/http/
# pure_perl.t runs the HTTP tests again on the Perl ones.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::HTTP::Core::xs_response_head;

my $SERVER  = "Server: Perennial\r\n";
my %HEADERS = (
    none      => [],
    type      => ['Content-Type'      => 'text/plain'],
    length    => ['Content-Length'    => 3, 'Content-Type' => 'text/plain'],
    chunked   => ['Transfer-Encoding' => 'chunked'],
    close     => [Connection          => 'Close', 'X-A' => 1],
    keep      => [Connection          => 'keep-alive'],
    own       => [date                => 'Mon, 01 Jan 2024 00:00:00 GMT', SERVER => 'mine/1'],
    breaks    => ["X-\r\nInjected"    => 1, 'X-B' => "a\r\nSet-Cookie: x=1", 'X-C' => "\n\r"],
    length_cr => ['Content-Length'    => "3\r\nX: y"],
    undefined => ['X-Undef'           => undef],
    odd       => ['X-Odd'],
    latin1    => ['X-L' => "caf\x{e9}"],
    upgraded  => [
        'X-U' => do { my $v = "caf\x{e9}"; utf8::upgrade($v); $v }
    ],
    numeric    => ['X-N'      => 42, 'Content-Length' => 0],
    close_sp   => [Connection => 'close '],
    many_names => [map { ("X-$_" => $_) } 1 .. 40],
);

# Both implementations' answers, the Date line aside (the two calls may fall either side of a
# second); a warning is part of the answer
sub both ($name, @args) {
    my @out;
    for my $impl ('xs', 'pp') {
        my @warn;
        local $SIG{__WARN__} = sub { push @warn, $_[0] =~ s/ at .*//sr };
        my $code = \&{"Perennial::HTTP::Core::${impl}_$name"};
        my @r    = eval { $code->(@args) };
        push @out, [$@ ? ('died: ' . ($@ =~ s/ at .*//sr)) : (), @r, @warn ? 'warned' : ()];
        $out[-1][0] =~ s/^Date: [^\r]*\r\n//m if !$@;
    }
    return @out;
}

my $cases = 0;
for my $status (100, 200, 204, 304, 404) {
    for my $http11 (0, 1) {
        for my $head_only (0, 1) {
            for my $keep (0, 1) {
                for my $body_length (undef, 0, 5) {
                    for my $set (sort keys %HEADERS) {
                        my $line = "HTTP/1.$http11 $status X\r\n";
                        my ($xs, $pp) = both(
                            'response_head', $line,        $status,
                            $HEADERS{$set},  $body_length, $http11,
                            $head_only,      $keep,        $SERVER
                        );
                        $cases++;
                        is_deeply $xs, $pp,
                              "response_head: $status, HTTP/1.$http11, head_only $head_only, "
                            . "keep $keep, length "
                            . ($body_length // 'undef')
                            . ", $set"
                            or diag explain [$xs, $pp];
                    }
                }
            }
        }
    }
}
note "$cases heads compared";

# A wide character cannot go into a head, nor into a body
my ($xs, $pp)
    = both('response_head', "HTTP/1.1 200 OK\r\n", 200, ['X-W' => "\x{263a}"], 0, 1, 0, 1, $SERVER);
like $xs->[0], qr/\Adied: Wide character in a response header/, 'C: a wide character dies';
like $pp->[0], qr/\Adied: Wide character in a response header/, 'Perl: the same';

# write_response: what the client reads, and what each returns, over a pair of sockets
sub written ($impl, $headers, $body, @flags) {
    socketpair(my $server, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    my $code = \&{"Perennial::HTTP::Core::${impl}_write_response"};
    my @r = eval { $code->($server, "HTTP/1.1 200 OK\r\n", 200, $headers, $body, @flags, $SERVER) };
    return ["died: " . ($@ =~ s/ at .*//sr)] if $@;
    close $server;
    my $got = do { local $/; <$client> };
    s/^Date: [^\r]*\r\n//m for $got, $r[1];
    return [$got, @r];
}

my %BODIES = (
    empty   => [],
    one     => ["Hello\n"],
    parts   => ['a', '', 'b' x 100, 0],
    many    => [map {"$_\n"} 1 .. 200],    # Past the parts one write takes: joined
    undef   => ['a', undef, 'b'],
    latin1  => ["caf\x{e9}"],
    upgrade => [
        do { my $v = "caf\x{e9}"; utf8::upgrade($v); $v }
    ],
    wide => ["\x{263a}"],
);
for my $body (sort keys %BODIES) {
    for my $flags ([1, 0, 1], [0, 0, 0], [1, 1, 1]) {
        my @warn;
        local $SIG{__WARN__} = sub { push @warn, @_ };
        my $c = written('xs', ['Content-Type' => 'text/plain'], $BODIES{$body}, @$flags);
        my $p = written('pp', ['Content-Type' => 'text/plain'], $BODIES{$body}, @$flags);
        is_deeply $c, $p, "write_response: $body body, flags @$flags" or diag explain [$c, $p];
    }
}
like written('xs', [], $BODIES{wide}, 1, 0, 1)->[0], qr/Wide character in the response body/,
    'a wide character in a body dies, not sent';

# A client that cannot take it all at once: the first write returns what went, at once
{
    socketpair(my $server, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    setsockopt($server, SOL_SOCKET, SO_SNDBUF, 4096)                    or die "SO_SNDBUF: $!";
    my ($n, $head, $framing, $length, $keep, $sent) = Perennial::HTTP::Core::xs_write_response(
        $server, "HTTP/1.1 200 OK\r\n",
        200,     [], ['x' x (4 << 20)],
        1,       0,  1, $SERVER
    );
    ok defined $n && $n > 0 && $n < length($head) + $sent,
        "a body larger than the socket takes: part written ($n bytes), no wait";
    is $sent, 4 << 20, 'the body bytes of the response are counted whole';
}

done_testing;
