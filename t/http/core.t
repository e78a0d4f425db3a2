use v5.36;
use Test::More;
use lib 't/lib';
use IO::Socket::IP;
use IO::Socket::UNIX;
use File::Temp   ();
use Socket       qw(AF_UNIX PF_UNSPEC SOCK_STREAM SOL_SOCKET SO_SNDBUF);
use POSIX        ();
use Scalar::Util ();
use Time::HiRes  ();
use Perennial::HTTP::Core;
use Perennial::HTTP::Request qw(parse_head);
use Perennial::Test::Corpus  qw(corpus);

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

# ready: the same answer from poll and from select, to read and to write, with a deadline to
# come and one past (one look)
{
    socketpair(my $server, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    my $soon = sub { Time::HiRes::time() + 0.05 };
    for my $impl ('xs', 'pp') {
        my $ready = \&{"Perennial::HTTP::Core::${impl}_ready"};
        ok !$ready->($server, $soon->()), "$impl ready: nothing to read within the deadline";
        ok $ready->($server, $soon->(), 1), "$impl ready: room to write";
    }
    syswrite $client, 'x';
    for my $impl ('xs', 'pp') {
        my $ready = \&{"Perennial::HTTP::Core::${impl}_ready"};
        ok $ready->($server, $soon->()),               "$impl ready: a byte to read";
        ok $ready->($server, Time::HiRes::time() - 1), "$impl ready: a deadline past gets a look";
        ok $ready->($server, 1e18), "$impl ready: a byte to read, and a deadline centuries away";
    }
    $server->blocking(0);
    1 while syswrite $server, 'y' x 65536;    # Until the socket takes no more
    for my $impl ('xs', 'pp') {
        my $ready = \&{"Perennial::HTTP::Core::${impl}_ready"};
        ok !$ready->($server, $soon->(), 1), "$impl ready: no room to write";
    }
}

# A signal that comes while ready waits has its Perl handler run then, not when the wait ends
# (a deadline's handler answers the request): the handler finds the socket still empty, the
# byte that ends the wait being sent after the signal
for my $impl ('xs', 'pp') {
    socketpair(my $server, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    my $parent = $$;
    my $kid    = fork // die "fork: $!";
    if (!$kid) {
        Time::HiRes::sleep(0.3);
        kill 'USR2', $parent;
        Time::HiRes::sleep(0.3);
        syswrite $client, 'x';
        POSIX::_exit(0);
    }
    my $empty;
    local $SIG{USR2} = sub {
        my $peek = '';
        recv($server, $peek, 1, Socket::MSG_PEEK() | Socket::MSG_DONTWAIT());
        $empty = !length $peek;
    };
    my $ready = \&{"Perennial::HTTP::Core::${impl}_ready"};
    ok $ready->($server, Time::HiRes::time() + 20), "$impl ready: the byte came";
    waitpid $kid, 0;
    ok $empty, "$impl ready: the signal's handler ran while it waited";
}

# accept_client: a connection that reads, writes, sends and shuts down as perl's accept gives
# it, with the client's address; in C one unbuffered stream
{
    my $listener = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 5)
        or die "listen: $@";
    for my $impl ('xs', 'pp') {
        my $client = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $listener->sockport)
            or die "connect: $@";
        my $accept = \&{"Perennial::HTTP::Core::${impl}_accept_client"};
        my ($conn, $peer) = $accept->($listener);
        ok $conn, "$impl accept_client: a connection";
        is_deeply [@$peer{qw(REMOTE_ADDR REMOTE_PORT)}], ['127.0.0.1', $client->sockport],
            "$impl accept_client: the client's address and port";
        is $peer->{'psgix.io'}, $conn, "$impl accept_client: psgix.io is the connection";
        syswrite $client, "ping";
        is sysread($conn, my $got, 10), 4, "$impl accept_client: sysread";
        ok send($conn, "pong", 0) == 4 && syswrite($conn, "!") == 1, "$impl: send and syswrite";
        ok shutdown($conn, 1),                                       "$impl: shutdown";
        is do { local $/; <$client> }, 'pong!', "$impl: the client reads what was sent";
        ok close($conn), "$impl: close";
    }
    for my $impl ('xs', 'pp') {
        my $accept = \&{"Perennial::HTTP::Core::${impl}_accept_client"};
    SKIP: {
            my $six = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0, Listen => 5)
                or skip 'no IPv6 loopback here', 1;
            my $client = IO::Socket::IP->new(PeerHost => '::1', PeerPort => $six->sockport)
                or die "connect: $@";
            is_deeply [@{($accept->($six))[1]}{qw(REMOTE_ADDR REMOTE_PORT)}],
                ['::1', $client->sockport],
                "$impl accept_client: an IPv6 client's address and port";
        }
        my $path   = File::Temp::tempdir(CLEANUP => 1) . "/$impl.sock";
        my $unix   = IO::Socket::UNIX->new(Local => $path, Listen => 5) or die "listen: $!";
        my $client = IO::Socket::UNIX->new(Peer  => $path)              or die "connect: $!";
        my ($conn, $peer) = $accept->($unix);
        is_deeply [sort keys %$peer], ['psgix.io'],
            "$impl accept_client: a Unix socket's client has no address";
    }
    $listener->blocking(0);
    is_deeply [Perennial::HTTP::Core::xs_accept_client($listener)], [],
        'nothing to accept: nothing, with $!';
    ok $!{EAGAIN}, 'EAGAIN';
    my $client = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $listener->sockport)
        or die "connect: $@";
    Perennial::HTTP::Core::ready($listener, Time::HiRes::time() + 5);
    my ($conn) = Perennial::HTTP::Core::xs_accept_client($listener);
    is_deeply [PerlIO::get_layers($conn)], ['unix'], 'in C, one unbuffered stream';
}

# accept_client in C keeps the handle of a connection for the next one: only when it was
# closed and nothing else holds it or wrote in its glob. An application that kept a
# connection's handle must never find the next client on it.
{
    my $listener = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 5)
        or die "listen: $@";
    my $next = sub ($from = '127.0.0.1') {
        my $client = IO::Socket::IP->new(
            LocalHost => $from,
            PeerHost  => '127.0.0.1',
            PeerPort  => $listener->sockport
        ) or die "connect: $@";
        my ($conn, $peer) = Perennial::HTTP::Core::xs_accept_client($listener);
        return ($conn, $peer, $client);
    };
    my ($conn, $peer) = $next->();
    my $first = Scalar::Util::refaddr($conn);
    close $conn;
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    is Scalar::Util::refaddr($conn), $first, 'a closed handle nothing holds is used again';
    ok defined fileno $conn, 'and it is open on the new connection';

    my $kept = $conn;
    close $conn;
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    isnt Scalar::Util::refaddr($conn), Scalar::Util::refaddr($kept),
        'one an application kept is not';
    ok !defined fileno $kept, 'and stays closed';
    undef $kept;

    # A glob of the application's own aliased to it (its count, not the reference's), or one
    # blessed into a class of its own
    *main::SAVED = $conn;
    close $conn;
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    ok !defined fileno(*main::SAVED), 'nor one a glob of the application aliases';
    undef *main::SAVED;
    bless $conn, 'Local::Sock';
    close $conn;
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    is ref $conn, 'GLOB', 'nor a blessed one';

    ${*$conn}{mark} = 1;
    close $conn;
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    ok !exists ${*$conn}{mark}, 'nor one with a value in its glob';

    # Dropped without a close: the next accept lets it go, and its client sees the end
    my $client;
    ($conn, $peer, $client) = $next->();
    undef $_ for $conn, $peer;
    ($conn, $peer) = $next->();
    is sysread($client, my $got, 10), 0, 'a handle dropped open is closed at the next accept';

    # Addresses of every width, written as inet_ntoa writes them
    for my $from ('127.0.0.1', '127.10.200.3', '127.255.0.99') {
        (undef, $peer) = $next->($from);
        is $peer->{REMOTE_ADDR}, $from, "the client's address $from";
    }
}

# waiter and next_ready: the index of a handle that can be read, in a process forked after the
# waiter was made too; nothing after a signal, whose handler has run
for my $impl ('xs', 'pp') {
    my $waiter = \&{"Perennial::HTTP::Core::${impl}_waiter"};
    my $next   = \&{"Perennial::HTTP::Core::${impl}_next_ready"};
    pipe(my $r0, my $w0) or die "pipe: $!";
    pipe(my $r1, my $w1) or die "pipe: $!";
    my $w = $waiter->([$r0, $r1]);
    ok $w, "$impl waiter: made";
    syswrite $w1, 'x';
    is $next->($w), 1, "$impl next_ready: the second handle";
    sysread $r1, my $junk, 1;
    syswrite $w0, 'x';
    is $next->($w), 0, "$impl next_ready: then the first";
    sysread $r0, $junk, 1;
    my $kid = fork // die "fork: $!";

    if (!$kid) {
        syswrite $w1, 'y';
        POSIX::_exit(0);
    }
    is $next->($w), 1, "$impl next_ready: a write from a child";
    waitpid $kid, 0;
    sysread $r1, $junk, 1;
    my $caught = 0;
    local $SIG{ALRM} = sub { $caught++ };
    my $alarm = fork // die "fork: $!";
    if (!$alarm) { Time::HiRes::sleep(0.2); kill 'ALRM', getppid; POSIX::_exit(0) }
    is_deeply [$next->($w)], [], "$impl next_ready: nothing after a signal";
    is $caught, 1, "$impl next_ready: and the signal's handler ran";
    waitpid $alarm, 0;

    # A signal handled just before the wait began does not end it: the wait must end by
    # itself, so that the caller looks at what the handler set (a worker told to stop). The
    # alarm only turns a wait without end into a failure here.
    my $returned = eval {
        local $SIG{ALRM} = sub { die "still waiting\n" };
        alarm 10;
        my @got = $next->($w);
        alarm 0;
        "@got";
    };
    is $returned, '', "$impl next_ready: with nothing to read and no signal, nothing, in time";
}

# pid: the process's id, kept in C and forgotten in a forked child
for my $impl ('xs', 'pp') {
    my $pid = \&{"Perennial::HTTP::Core::${impl}_pid"};
    is $pid->(), $$, "$impl pid: this process's";
    pipe(my $read, my $write) or die "pipe: $!";
    my $kid = fork // die "fork: $!";
    if (!$kid) { print {$write} $pid->() == $$ && $pid->() != getppid() ? 'own' : 'stale'; exit 0 }
    close $write;
    is scalar(<$read>), 'own', "$impl pid: a forked child gets its own";
    waitpid $kid, 0;
    is $pid->(), $$, "$impl pid: and the parent keeps its";
}

# parse_plain: a head it reads, the Perl judge accepts, with the same length and environment;
# any other it leaves to the judge. Over the malformed-request corpus, plain requests as
# browsers and tools send them, and limits tight enough to refuse them.
my %BASE  = ('psgi.version' => [1, 1], SERVER_NAME => '127.0.0.1', SERVER_PORT => 80);
my %PEER  = (REMOTE_ADDR    => '127.0.0.1', REMOTE_PORT => 40000);
my @PLAIN = (
    "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "HEAD /a/b.html?x=1&y=%20 HTTP/1.1\r\nHost: example.org:8080\r\nAccept: */*\r\n\r\n",
    "GET /caf%C3%A9/%2Fslash%3F HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/7.88.1\r\n\r\n",
    "POST /p HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nabc",
    "PUT /x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "DELETE /x HTTP/1.1\r\nhost: LocalHost\r\nX-Empty:\r\nX-Spaces: \t a b \t\r\n\r\n",
    "OPTIONS /x HTTP/1.1\r\nHost: [::1]:8529\r\nX-Obs: caf\xe9\r\n\r\n",
    "PATCH /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.1\r\n",
    "GET /~user/a+b;c,d\@e!\$'()* HTTP/1.1\r\nHost: localhost\r\n"
        . join('', map {"X-H$_: $_\r\n"} 1 .. 60) . "\r\n",
);
my @LIMITS = (
    {line => 8190, fields => 100, field_size => 8190},
    {line => 10,   fields => 2,   field_size => 20},
    {line => 8190, fields => 100, field_size => 8190, unsafe     => 1},
    {line => 8190, fields => 100, field_size => 8190, registered => 1},
);
my ($plain, $agreed, $left) = (0, 0, 0);
my @cases = ((map { $_->[2] } corpus(15, 700)), @PLAIN);
for my $limits (@LIMITS) {
    $limits->{hosts} = {};
    for my $bytes (@cases) {
        my ($c_len, $c_env)
            = Perennial::HTTP::Core::xs_parse_plain($bytes, \%BASE, \%PEER, $limits);
        my %env = (%BASE, %PEER);
        my $buf = $bytes;
        my $len = parse_head(\$buf, \%env, $limits);
        ($c_len, $c_env) = Perennial::HTTP::Core::xs_parse_plain($bytes, \%BASE, \%PEER, $limits)
            if !$c_len;    # The judge has seen the Host now
        if (!$c_len) { $left++; next }
        $plain++;
        if ($len == $c_len && eq_hash($c_env, \%env)) { $agreed++; next }
        fail('parse_plain read a head as the judge does not')
            or diag explain [$bytes, $len, \%env, $c_env];
    }
}
is $agreed, $plain,
    "every head parse_plain read ($plain), the judge read the same way ($left left to it)";
ok $plain >= @PLAIN, 'the plain requests are read in C';
for my $bytes (@PLAIN) {
    my $limits = {%{$LIMITS[0]}, hosts => {}};
    parse_head(\(my $copy = $bytes), {%BASE, %PEER}, $limits);
    ok scalar(Perennial::HTTP::Core::xs_parse_plain($bytes, \%BASE, \%PEER, $limits)),
        'plain: ' . ($bytes =~ /\A([^\r]*)/)[0];
}
is_deeply [Perennial::HTTP::Core::pp_parse_plain($PLAIN[0], \%BASE, \%PEER, $LIMITS[0])], [],
    'the Perl twin leaves every head to the judge';

done_testing;
