package Perennial::HTTP::Response;
use v5.36;
use Carp         qw(croak);
use Errno        qw(EAGAIN EINTR);
use Exporter     qw(import);
use HTTP::Status ();
use IO::Handle   ();
use Plack::Util  ();
use Time::HiRes  ();
use Perennial::HTTP::Sendfile;

# A PSGI response to bytes on the socket. $c is the connection's per-request context:
#   sock, http11, head_only, timeout (a write's limit), keep_alive (in: wanted, out: still
#   possible), bytes (out), broken (out: why the response could not be finished)

our @EXPORT_OK
    = qw(error_bytes plain_response send_body server_tokens start_response write_all write_response);

my %NO_BODY = map { $_ => 1 } 204, 304;
my ($date_second, $date) = (-1, '');
my $SERVER      = "Server: Perennial\r\n";           # ServerTokens' choice, set once at start
my @DAY         = qw(Sun Mon Tue Wed Thu Fri Sat);
my @MONTH       = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
my $TOO_SLOW    = 'the client did not take the response within Timeout';
my $PER_TIMEOUT = 65_536;                            # Bytes a client must take within each Timeout

sub error_bytes ($status, $http11 = 1, $why = undef) {
    my $reason = HTTP::Status::status_message($status) // 'Error';
    my $body   = _error_body($status) . (defined $why ? "The request was refused: $why.\n" : '');
    return
        sprintf "HTTP/1.%d %d %s\r\nDate: %s\r\n${SERVER}Content-Type: text/plain\r\n"
        . "Content-Length: %d\r\nConnection: close\r\n\r\n%s", $http11 ? 1 : 0, $status, $reason,
        _date(), length $body, $body;
}

# A whole PSGI response in plain text, "404 Not Found" unless a body is given; headers may add
# to or replace the Content-Type
sub plain_response ($status, $body = undef, @headers) {
    $body //= _error_body($status);
    my %h = ('Content-Type' => 'text/plain', @headers);
    return [$status, [%h, 'Content-Length' => length $body], [$body]];
}

# ServerTokens: how much the Server header says (an application's own Server header replaces it)
sub server_tokens ($how) {
    require Perennial;
    my $v   = $Perennial::VERSION;
    my %say = (
        prod        => 'Perennial',
        productonly => 'Perennial',
        major       => 'Perennial/' . ($v =~ s/\..*//r),
        minor       => 'Perennial/' . ($v =~ s/\A(\d+\.\d+).*/$1/r),
        min         => "Perennial/$v",
        minimal     => "Perennial/$v",
        os          => "Perennial/$v (Unix)",
        full        => "Perennial/$v (Unix) Perl/$^V",
    );
    my $say = $say{lc $how}
        // croak "ServerTokens must be Prod, Major, Minor, Min, OS or Full, got '$how'";
    $SERVER = "Server: $say\r\n";
    return;
}

# What the Server header says, for the error pages' signature
sub server_product () { $SERVER =~ s/\AServer: //r =~ s/\r\n\z//r }

# Prepares the head; returns the framing for the body: 'length', 'chunked', 'close' or 'none'
sub start_response ($c, $status, $headers, $body_length = undef) {
    my ($out, $length, $has_date, $close) = _headers($headers);
    my $framing = 'length';
    if    ($status < 200 || $NO_BODY{$status}) { $framing = 'none' }
    elsif (!defined $length) {
        $length = $body_length;
        if    (defined $length) { $out .= "Content-Length: $length\r\n" }
        elsif ($c->{head_only}) { $framing = 'none' }
        elsif ($c->{http11})    { $framing = 'chunked'; $out .= "Transfer-Encoding: chunked\r\n" }
        else                    { $framing = 'close' }
    }
    $c->{length}     = $length;
    $c->{keep_alive} = 0      if $close || $framing eq 'close';
    $framing         = 'none' if $c->{head_only};
    $out
        .= $c->{keep_alive}
        ? ($c->{http11} ? '' : "Connection: keep-alive\r\n")
        : "Connection: close\r\n";
    $out .= 'Date: ' . _date() . "\r\n" unless $has_date;
    $c->{status}      = $status;
    $c->{res_headers} = $headers;
    $c->{head}        = sprintf(
        "HTTP/1.%d %d %s\r\n",
        $c->{http11} ? 1 : 0,
        $status, HTTP::Status::status_message($status) // 'Unknown'
    ) . "$out\r\n";
    $c->{head_bytes} = length $c->{head};
    return $c->{framing} = $framing;
}

# Writes all of $data; false when the client went away or was too slow: Timeout ($c->{timeout})
# bounds the whole write of up to 64 KiB, and each further 64 KiB of a larger one. The socket's
# own send timeout starts again with every partial write, so a reader that takes a byte now and
# then would hold the worker for as long as it liked; a slow but real client takes 64 KiB in
# Timeout (60 s: 1 KiB/s).
sub write_all ($c, $data) {
    return _unsent($c, length $data) if $c->{broken};
    my $until = Time::HiRes::time() + ($c->{timeout} // 60);
    my $n     = syswrite $c->{sock}, $data;
    return 1 if ($n // -1) == length $data;    # The usual case: one write
    if (!defined $n && $! != EINTR && $! != EAGAIN) {
        broken($c, "$!");
        return _unsent($c, length $data);
    }
    return _write_rest($c, \$data, $n // 0, $until);
}

# A write that failed: how much of it did not go ($c->{unsent}, for the access log's count)
sub _unsent ($c, $bytes) {
    $c->{unsent} = $bytes;
    return 0;
}

# Counts $n bytes of body as sent, less what a failed write left unsent; returns $ok
sub _counted ($c, $ok, $n) {
    my $lost = $ok ? 0 : $c->{unsent} // $n;
    $c->{bytes} += $n - ($lost < $n ? $lost : $n);
    return $ok;
}

# The rest of a write the client is slow to take: without blocking, each part when the socket
# can take it, until the deadline
sub _write_rest ($c, $data_ref, $off, $until) {
    my $sock = $c->{sock};
    IO::Handle::blocking($sock, 0);
    my ($ok, $taken) = (1, $off);
    while ($off < length $$data_ref) {
        if (!writable($sock, $until)) { $ok = broken($c, $TOO_SLOW); last }
        my $n = syswrite $sock, $$data_ref, length($$data_ref) - $off, $off;
        if (defined $n) { $off += $n; $until = deadline($c, $until, \$taken, $n); next }
        next if $! == EINTR || $! == EAGAIN;
        $ok = broken($c, "$!");
        last;
    }
    IO::Handle::blocking($sock, 1);
    return $ok || _unsent($c, length($$data_ref) - $off);
}

# The deadline of a write after $n more bytes went: Timeout later for each 64 KiB taken
sub deadline ($c, $until, $taken_ref, $n) {
    return $until if ($$taken_ref += $n) < $PER_TIMEOUT;
    $$taken_ref = 0;
    return Time::HiRes::time() + ($c->{timeout} // 60);
}

# Whether the socket can take more bytes before the deadline; a signal does not cut the wait
sub writable ($sock, $until) {
    my $win = '';
    vec($win, fileno $sock, 1) = 1;
    while ((my $left = $until - Time::HiRes::time()) > 0) {
        my $n = select(undef, my $wout = $win, undef, $left);
        return 1 if $n > 0;
        return 0 if $n == 0 || $! != EINTR;
    }
    return 0;
}

# The response cannot be finished: the connection ends after it (false, for the caller's return)
sub broken ($c, $why) {
    $c->{broken}     = $why;
    $c->{keep_alive} = 0;
    return 0;
}

# Writes a complete [status, headers, body] response
sub write_response ($c, $res) {
    my ($status, $headers, $body) = @$res;
    if (ref $body eq 'ARRAY') {
        my $content = join '', @$body;

        # Known length: the head and the body leave in one write
        my $out = start_response($c, $status, $headers, length $content) eq 'none' ? '' : $content;
        return _counted($c, write_all($c, delete($c->{head}) . $out), length $out);
    }
    my $length  = Plack::Util::content_length($body);
    my $framing = start_response($c, $status, $headers, $length);
    return !$c->{broken}
        if $framing eq 'length'
        && Perennial::HTTP::Sendfile::send_file($c, $body, $c->{length});
    local $/ = \65536;
    my $first = $framing eq 'none' ? '' : $body->getline // '';
    send_body($c, $framing, $first, 0);
    if ($framing ne 'none') {
        while (!$c->{broken} && defined(my $chunk = $body->getline)) {
            send_body($c, $framing, $chunk, 0);
        }
        send_body($c, $framing, '', 1);
    }
    $body->close;
    return !$c->{broken};
}

sub _error_body ($status) { "$status " . (HTTP::Status::status_message($status) // 'Error') . "\n" }

# The application's headers as text, after the Server header unless it has its own; framing
# headers are the server's to write
sub _headers ($headers) {
    my ($out, $length, $has_date, $close, $has_server) = ('', undef, 0, 0, 0);
    for (my $i = 0; $i < @$headers; $i += 2) {
        my ($name, $value) = @$headers[$i, $i + 1];

        # A line break in a header would start a header (or a body) of the client's choosing
        $_ =~ tr/\r\n/  / for $name, $value;
        my $lc = lc $name;
        if    ($lc eq 'content-length')    { $length = $value }
        elsif ($lc eq 'transfer-encoding') {next}
        elsif ($lc eq 'connection')        { $close      = 1 if lc $value eq 'close'; next }
        elsif ($lc eq 'date')              { $has_date   = 1 }
        elsif ($lc eq 'server')            { $has_server = 1 }
        $out .= "$name: $value\r\n";
    }
    $out = $SERVER . $out unless $has_server;
    return ($out, $length, $has_date, $close);
}

sub _date () {
    my $now = time;
    return $date if $now == $date_second;
    my @t = gmtime $now;
    $date_second = $now;
    return $date = sprintf '%s, %02d %s %04d %02d:%02d:%02d GMT', $DAY[$t[6]], $t[3], $MONTH[$t[4]],
        $t[5] + 1900, @t[2, 1, 0];
}

sub send_body ($c, $framing, $data, $last) {
    my $out = delete($c->{head}) // '';
    if ($framing eq 'chunked') {
        $out .= sprintf("%x\r\n", length $data) . $data . "\r\n" if length $data;
        $out .= "0\r\n\r\n"                                      if $last;
    }
    elsif ($framing ne 'none') { $out .= $data }
    my $n = $framing ne 'none' ? length $data : 0;
    return _counted($c, length $out ? write_all($c, $out) : 1, $n);
}

1;

__END__

=head1 NAME

Perennial::HTTP::Response - write a PSGI response as HTTP/1.x bytes

=head1 SYNOPSIS

    use Perennial::HTTP::Response qw(write_response);
    my $c = {sock => $sock, http11 => 1, head_only => 0, keep_alive => 1, bytes => 0};
    write_response($c, [200, ['Content-Type' => 'text/plain'], ["Hello\n"]]);

=head1 DESCRIPTION

Turns a PSGI response into bytes: an array body goes out in one C<write(2)> with the head and a
computed Content-Length; a filehandle body is sent in 64 KiB blocks with its length when it is
known; otherwise the body is chunked (HTTP/1.1) or ends with the connection (HTTP/1.0). HEAD
responses carry the head only, and 1xx, 204 and 304 responses never carry a body. Write
errors (the client went away) are recorded in the context, never thrown.

=head1 FUNCTIONS

=head2 error_bytes

    my $bytes = error_bytes(400);
    my $bytes = error_bytes(400, 1, 'its path climbs above the root');

A complete plain-text error response that closes the connection; with a reason (a sentence of
the server's own), the body says why the request was refused.

=head2 plain_response

    return plain_response(404);                                # "404 Not Found\n"
    return plain_response(200, $json, 'Content-Type' => 'application/json');

A whole PSGI response with its Content-Length; C<text/plain> unless the headers say otherwise.

=head2 send_body

    send_body($c, $framing, $bytes, $is_last);

Sends body bytes in the framing chosen, preceded by the head if it has not gone out yet.

=head2 start_response

    my $framing = start_response($c, 200, \@headers, $length_or_undef);

Prepares the head (sent with the first body bytes) and returns the framing chosen.

=head2 write_all

    write_all($c, $bytes) or return;

Writes everything, retrying after signals; false when the client has gone.

=head2 write_response

    write_response($c, [$status, $headers, $body]);

Writes a whole response; false when the client has gone.

=cut
