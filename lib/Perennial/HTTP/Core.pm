package Perennial::HTTP::Core;
use v5.36;
use Errno    qw(EINTR ENOTSOCK);
use Exporter qw(import);
use Socket   qw(AF_INET AF_INET6 MSG_DONTWAIT MSG_NOSIGNAL inet_ntoa inet_ntop sockaddr_family
    unpack_sockaddr_in unpack_sockaddr_in6);
use Time::HiRes ();
use Perennial::Twins;

# The hot path's functions that have a C implementation (xs/Core.xs, built by `make`) beside
# the pure-Perl one here, which does the same byte for byte. The C one is used when it was
# built and PERENNIAL_PURE_PERL is not set; the tests run both.

our @EXPORT_OK
    = qw(accept_client http_date next_ready parse_plain peer_of pid ready response_head waiter
    write_response);

my %OWN
    = ('content-length' => 1, 'transfer-encoding' => 2, connection => 3, date => 4, server => 5);
my @DAY   = qw(Sun Mon Tue Wed Thu Fri Sat);
my @MONTH = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
my ($date_second, $date) = (-1, '');

my $IMPLEMENTATION = Perennial::Twins::install(__PACKAGE__,
    qw(response_head write_response parse_plain ready accept_client pid waiter next_ready));

# Which implementation this process runs: 'C' or 'Perl'
sub implementation () {$IMPLEMENTATION}

# This process's id: in C, asked of the kernel once per process (a fork forgets it)
sub pp_pid () {$$}

# The head of a response: (head, framing, length, keep_alive). The application's headers are
# written after the Server line (unless it has its own), a line break in a name or a value as a
# space (it would start a header, or a body, of the client's choosing); Content-Length is read,
# Transfer-Encoding and Connection are the server's to write (Connection: close is noted), Date
# is added unless given. The framing of the body: 'length', 'chunked', 'close' or 'none'.
sub pp_response_head ($line, $status, $headers, $body_length, $http11, $head_only, $keep, $server) {
    my ($out, $length, $has_date, $close, $has_server) = _headers($headers);
    $out = $server . $out unless $has_server;
    (my $framing, $length) = _framing(\$out, $status, $length, $body_length, $http11, $head_only);
    $keep    = 0      if $close || $framing eq 'close';
    $framing = 'none' if $head_only;
    $out .= !$keep ? "Connection: close\r\n" : $http11 ? '' : "Connection: keep-alive\r\n";
    $out .= 'Date: ' . http_date() . "\r\n" unless $has_date;
    my $head = "$line$out\r\n";
    utf8::downgrade($head, 1) || die "Wide character in a response header\n"
        if utf8::is_utf8($head);
    return ($head, $framing, $length, $keep ? 1 : 0);
}

# How the body is framed (and the Content-Length or Transfer-Encoding line it needs): its own
# length, chunked, up to the end of the connection, or no body at all. The Content-Length line
# is the server's: the whole body's length when it is known, whatever the application said (its
# own would end the response early, or send bytes the client reads as the next response); else
# the application's ($length: undef when it gave none, or no single number). For HEAD, an empty
# body keeps the application's length (that of the body a GET would have).
sub _framing ($out_ref, $status, $length, $body_length, $http11, $head_only) {

    # A 1xx, 204 or 304 has no body, and no length (Apache drops a script's there too)
    return ('none', undef) if $status < 200 || $status == 204 || $status == 304;
    $length = $body_length
        if defined $body_length && !($head_only && defined $length && !$body_length);
    if (defined $length) {
        $$out_ref .= "Content-Length: $length\r\n";
        return ('length', $length);
    }
    return ('none',  undef) if $head_only;
    return ('close', undef) unless $http11;
    $$out_ref .= "Transfer-Encoding: chunked\r\n";
    return ('chunked', undef);
}

# A request head that is plain (see the POD) as a new environment: (length, env), or nothing,
# and the judge in Perennial::HTTP::Request reads it. In Perl, the judge reads every head.
sub pp_parse_plain ($buf, $base, $peer, $limits) {return}

# A connection from a listening socket: (its handle, the connection's keys of a request's
# environment: psgix.io, and REMOTE_ADDR and REMOTE_PORT unless the client came on a Unix
# socket), or nothing with $! (EAGAIN on a listener that does not block, EINTR after a signal)
sub pp_accept_client ($listener) {
    my $peer = accept(my $client, $listener) or return;
    return ($client, {'psgix.io' => $client, _address_and_port($peer)});
}

# What waits for any of the handles to be readable (an epoll instance: in Perl, Linux::Epoll's,
# whose callback notes the index), or undef when there can be none
sub pp_waiter ($handles) {
    eval { require Linux::Epoll; 1 } or return;
    my ($epoll, $ready) = (Linux::Epoll->new);
    for my $i (0 .. $#$handles) {
        $epoll->add($handles->[$i], ['in', 'exclusive'], sub ($events) { $ready = $i });
    }
    return [$epoll, \$ready];
}

# The index of a handle that can be read, waiting at most a second; nothing after a signal or
# the second (dies on an error)
sub pp_next_ready ($waiter) {
    $waiter->[0]->wait(1, 1) or return;
    return ${$waiter->[1]};
}

# The same keys for a connection that came another way (from the parking process): from its
# peer's address, asked of the kernel
sub peer_of ($sock) { return {'psgix.io' => $sock, _address_and_port(getpeername($sock) // '')} }

# The address in a socket address, as text, and its port; nothing for one of another family
sub address_of ($sockaddr) {
    my %of = _address_and_port($sockaddr) or return;
    return @of{qw(REMOTE_ADDR REMOTE_PORT)};
}

sub _address_and_port ($peer) {
    my $family = length $peer >= 2 ? sockaddr_family($peer) : -1;
    if ($family == AF_INET) {
        my ($port, $ip) = unpack_sockaddr_in($peer);
        return (REMOTE_ADDR => inet_ntoa($ip), REMOTE_PORT => $port);
    }
    if ($family == AF_INET6) {
        my ($port, $ip) = unpack_sockaddr_in6($peer);
        return (REMOTE_ADDR => inet_ntop(AF_INET6, $ip), REMOTE_PORT => $port);
    }
    return ();
}

# Whether the socket can be read (or its end is there), or with $write can take more bytes,
# before the deadline (an epoch time; one look when it has passed); a signal does not cut the
# wait
sub pp_ready ($sock, $until, $write = 0) {
    my $bits = '';
    vec($bits, fileno $sock, 1) = 1;
    while (1) {
        my $left = $until - Time::HiRes::time();
        $left = 0 if $left < 0;
        my $n
            = $write
            ? select(undef, my $w = $bits, undef, $left)
            : select(my $r = $bits, undef, undef, $left);
        return 1 if $n > 0;
        return 0 if $n == 0 || $! != EINTR;
    }
}

# A whole response with an array body, head and body in one write that does not wait: (bytes
# written or undef with $!, head, framing, length, keep_alive, body bytes). What the client
# could not take at once is the caller's to send.
sub pp_write_response ($sock, $line, $status, $headers, $body, $http11, $head_only, $keep, $server)
{
    my $content = join '', @$body;
    utf8::downgrade($content, 1) || die "Wide character in the response body\n"
        if utf8::is_utf8($content);
    my ($head, $framing, $length, $keep_alive)
        = pp_response_head($line, $status, $headers, length $content,
        $http11, $head_only, $keep, $server);
    $content = '' if $framing eq 'none';
    my $n = send($sock, $head . $content, MSG_DONTWAIT | MSG_NOSIGNAL);
    $n = syswrite($sock, $head . $content) if !defined $n && $! == ENOTSOCK;
    return ($n, $head, $framing, $length, $keep_alive, length $content);
}

# The application's headers as text: one pass, a hash lookup per name; the line breaks are
# counted once over the whole text, and only a head that has one in a name or a value is
# written again without them
sub _headers ($headers) {
    my ($out, $length, $has_date, $close, $has_server, $lines, $lengths)
        = ('', undef, 0, 0, 0, 0, 0);
    for (my $i = 0; $i < @$headers; $i += 2) {
        my ($name, $value) = @$headers[$i, $i + 1];
        if (my $own = $OWN{lc $name}) {
            next if $own == 2;
            if ($own == 1) {    # The application's length: one number, or none (_framing)
                $value //= '';
                if    (!$lengths++) { $length = $value =~ /\A[0-9]{1,18}\z/ ? $value : undef }
                elsif (defined $length && $value ne $length) { undef $length }
                next;
            }
            elsif ($own == 3) { $close      = 1 if lc $value eq 'close'; next }
            elsif ($own == 4) { $has_date   = 1 }
            else              { $has_server = 1 }
        }
        $out .= "$name: $value\r\n";
        $lines++;
    }
    return _headers([map {tr/\r\n/  /r} map { $_ // '' } @$headers])
        if ($out =~ tr/\n//) != $lines || ($out =~ tr/\r//) != $lines;
    return ($out, $length, $has_date, $close, $has_server);
}

# The date of this second as HTTP writes it (made once a second)
sub http_date () {
    my $now = time;
    return $date if $now == $date_second;
    my @t = gmtime $now;
    $date_second = $now;
    return $date = sprintf '%s, %02d %s %04d %02d:%02d:%02d GMT', $DAY[$t[6]], $t[3], $MONTH[$t[4]],
        $t[5] + 1900, @t[2, 1, 0];
}

1;

__END__

=head1 NAME

Perennial::HTTP::Core - the hot path's functions, in C when built, in Perl otherwise

=head1 SYNOPSIS

    use Perennial::HTTP::Core qw(response_head);
    my ($head, $framing, $length, $keep_alive) = response_head("HTTP/1.1 200 OK\r\n", 200,
        ['Content-Type' => 'text/plain'], 6, 1, 0, 1, "Server: Perennial\r\n");

=head1 DESCRIPTION

The per-request work that must be cheap, as plain functions of plain values. Each has a C
implementation in F<xs/Core.xs>, which C<make> builds into F<lib/auto/>, and a pure-Perl one
here that gives the same bytes; the C one is used when it was built, unless the environment
has C<PERENNIAL_PURE_PERL> set. The test suite runs both (F<t/http/core.t> compares them, and
F<t/http/pure_perl.t> runs the HTTP tests again on the Perl one). The figures that decided what
is in C are in F<docs/design-notes.md>.

=head1 FUNCTIONS

=head2 parse_plain

    my ($length, $env) = parse_plain($buffer, \%listener_env, \%connection_env, $limits)
        or ...;    # not plain: Perennial::HTTP::Request::parse_head judges it

A whole request head at the start of C<$buffer>, when it is plain: a method among GET, HEAD,
POST, PUT, DELETE, OPTIONS and PATCH, a path of printable bytes without C<#> or C<%00>, whose
C<%XX> decode to no dot segment, C<HTTP/1.0> or C<HTTP/1.1>, header lines C<name: value> ended
by CRLF with token names (no C<_>), each once, within the limits, no C<Expect>, and a Host
that the judge found good before on the same limits (C<< $limits->{hosts} >>; required with
HTTP/1.1), in HttpProtocolOptions Strict without RegisteredMethods. Returns its length and a
new environment: the two hashes' keys, and the request's as HTTP::Parser::XS names them
(C<REQUEST_METHOD>, C<REQUEST_URI>, C<SCRIPT_NAME>, C<PATH_INFO>, C<QUERY_STRING>,
C<SERVER_PROTOCOL>, C<CONTENT_LENGTH>, C<CONTENT_TYPE>, C<HTTP_*>). Anything else returns
nothing and refuses nothing: the judge reads it from the start and gives the same environment
for a plain head (t/http/core.t checks both over the requests of the malformed-request corpus
and more). The Perl twin returns nothing for every head.

=head2 response_head

    my ($head, $framing, $length, $keep_alive) = response_head($status_line, $status,
        \@headers, $body_length, $http11, $head_only, $keep_alive, $server_line);

The head of a response, status line to the empty line: the application's headers after
C<$server_line> (unless it gave a Server header), a line break in a name or a value written
as a space; C<Content-Length> from the application or from C<$body_length>, else
C<Transfer-Encoding: chunked> (HTTP/1.1) or the end of the connection (HTTP/1.0);
C<Connection> as the keep-alive decision and the application's C<Connection: close> make it;
C<Date> unless given. Returns the head, the framing of the body (C<length>, C<chunked>, C<close>
or C<none>: 1xx, 204, 304 and HEAD have no body), the length and whether the connection can
stay open. Dies on a header with characters wider than a byte.

=head2 write_response

    my ($written, $head, $framing, $length, $keep_alive, $body_bytes) = write_response($socket,
        "HTTP/1.1 200 OK\r\n", 200, \@headers, \@body, 1, 0, 1, "Server: Perennial\r\n");

A whole response whose body is an array: its head as C<response_head> makes it (the length is
the body's), and head and body in one C<sendmsg(2)> (C<writev(2)> on a descriptor that is not
a socket) that does not wait for the client. Returns the bytes written (undef, with C<$!>, when
none could be), the head, the framing, the length, whether the connection can stay open and
the bytes of body in the response (none for HEAD, 1xx, 204 and 304). When fewer than head and
body were written, the rest is the caller's to send within its time limit. Dies on characters
wider than a byte.

=head2 ready

    ready($socket, $deadline)    or close_it();    # to read
    ready($socket, $deadline, 1) or give_up();     # to write

Whether the socket can be read (or has ended), or can take more bytes, before the deadline (an
epoch time); a deadline passed still gets one look, and a signal does not end the wait.
C<poll(2)> in C, C<select> in Perl.

=head2 accept_client

    my ($client, $peer) = accept_client($listening_socket) or die "accept: $!";

A connection: its handle (a glob, as perl's C<accept> gives) and the client's packed address,
or nothing with C<$!> set. In C, C<accept4(2)> with close-on-exec, and the handle is one
unbuffered stream (the C<:unix> layer) for reading and writing, where perl's C<accept> makes two
buffered ones and asks the kernel six questions about them (C<fcntl>, C<ioctl>, C<lseek>
each); reads and writes on a client are C<sysread>, C<send> and C<sendmsg>, which no buffer
stands between.

=head2 waiter

    my $waiter = waiter([$listener, $other]) or fall_back();

What waits for any of the handles to be readable: an epoll instance (in C, its descriptor's
number, which stays open until the process ends; in Perl, Linux::Epoll's), or undef when none
can be made. Each handle is in it exclusively (C<EPOLLEXCLUSIVE>): when
several processes have each made a waiter for the same handle, Linux wakes one of those that
are waiting (the first to have made its waiter), not all of them. A process forked after it
shares it.

=head2 next_ready

    my $index = next_ready($waiter) // next;

The index, in the list given to C<waiter>, of a handle that can be read, after waiting at most
a second; nothing after a signal (its handler has run) or when the second passed, so that the
caller looks again at what a signal handler may have set just before the wait began (perl
runs its handlers between ops, and such a signal would not end the wait). Dies on an error.

=head2 peer_of

    my $peer = peer_of($sock);    # {psgix.io, REMOTE_ADDR, REMOTE_PORT}

The same keys as C<accept_client> gives, for a connection that came from the parking process
(L<Perennial::Park>): from C<getpeername(2)>.

=head2 address_of

    my ($ip, $port) = Perennial::HTTP::Core::address_of(getsockname $sock);

The address (as text, an IPv6 one without brackets) and port in a socket address; nothing for
one that is not IPv4 or IPv6.

=head2 http_date

    my $date = http_date();    # "Tue, 24 Nov 2026 12:00:00 GMT"

=head2 pid

    my $pid = Perennial::HTTP::Core::pid();

This process's id, as C<$$>; in C asked of the kernel once per process, where C<$$> asks on
every read (a fork forgets it in the child, through C<pthread_atfork>).

=head2 implementation

    say Perennial::HTTP::Core::implementation();    # C or Perl

=head2 xs_serve_plain

    my ($served, $remaining, $t0, $n, $len, $env) = Perennial::HTTP::Core::xs_serve_plain(
        $connection, $sock, \$buf, $listener_env, $peer_env, $served, $remaining);

C only, with no Perl twin of its own: L<Perennial::Connection>'s loop is its twin. Serves the
connection's usual requests (F<xs/Loop.c>: a plain head without a body, answered with an
array), calling back the connection's methods for what it leaves to Perl, and returns the
counts. C<$t0> is undef when the connection is over (closed, lingering or parked); else the
Perl goes on with a request it began: its time, what the read returned (undef after an error,
with C<$!>), and, when its head was read, its length and environment.

=head2 xs_serve_connections

    my ($served, $take, $ready) = Perennial::HTTP::Core::xs_serve_connections($connection,
        $epoll, \@listeners, \@listener_envs, \@is_unix, \$stopping, \$reopen, $memory_due,
        $remaining);

C only: the worker's accept loop (L<Perennial::Server>'s is its twin). Waits on the workers'
epoll, accepts and serves connection after connection with C<xs_serve_plain>'s loop, and
returns the requests served when anything is due in the Perl loop, C<$take> true when the
next connection is the Perl's to take, and C<$ready> the index of the epoll's handle that has
it, when the wait named one (a Unix listener, or the parking process's handle after the
listeners): the Perl takes from that handle without waiting again.

=head2 xs_current_response

    my $c = Perennial::HTTP::Core::xs_current_response();

C only: the response object (a L<Perennial::HTTP::Response>) of the request whose application
the loop in C is running, or whose response it is writing, made at this call if the loop had
not needed one; undef between requests. The loop makes that object only when the Perl is to
see the response, so the connection's C<abort_request> and C<client_socket> (a request
deadline, an exit, a fork) ask for it here.

=cut
