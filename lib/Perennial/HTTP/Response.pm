package Perennial::HTTP::Response;
use v5.36;
use Carp                      qw(croak);
use Exporter                  qw(import);
use HTTP::Status              ();
use Plack::Util               ();
use Perennial::HTTP::Core     qw(http_date response_head write_response);
use Perennial::HTTP::Delivery qw(broken count_sent deadline finish send_from_file too_slow
    write_all write_rest);
use Perennial::HTTP::Sendfile;

# One response on its way to the client: the PSGI response written as HTTP/1.x bytes, and the
# writer a streaming application is given (write, close, poll_cb). Its fields, read by the
# connection loop and the access log: sock, http11, head_only, timeout (a write's limit),
# keep_alive (in: wanted, out: still possible), status, bytes (of the body, sent), broken (why
# it could not be finished), may_spool (in: a slow reader's rest may wait in a spool for the
# parking process), spool (the rest a slow reader has not taken yet, Perennial::HTTP::Spool). Its writing
# to the client, bounded in time and spooled for a slow reader, is Perennial::HTTP::Delivery's.

our @EXPORT_OK = qw(plain_response server_tokens);

# ServerTokens' choice, set once at start; "HTTP/1.1 200 OK\r\n", made once per version and
# status. (Package variables: the connection loop in C, xs/Loop.c, writes with them too.)
our $SERVER      = "Server: Perennial\r\n";
our @STATUS_LINE = ({}, {});

sub new ($class, %fields) { bless {bytes => 0, %fields}, $class }

# The response to a request read from $sock, as the connection loop makes one for each request
# (its arguments in order: named ones cost twice the instructions, and this runs every request);
# $keep_alive, whether the connection may stay open after it (what HTTP and the configuration
# allow), is the loop's to say, once, here. (A refused request's method may be anything, or
# none; its answer is an error, which has a body whatever the method.)
sub for_request ($class, $sock, $env, $t0, $timeout, $may_spool, $keep_alive) {
    return bless {
        bytes      => 0,
        sock       => $sock,
        env        => $env,
        t0         => $t0,
        timeout    => $timeout,
        may_spool  => $may_spool,
        keep_alive => $keep_alive,
        head_only  => ($env->{REQUEST_METHOD} // '') eq 'HEAD',
        http11     => $env->{SERVER_PROTOCOL} eq 'HTTP/1.1'
    }, $class;
}

# The connection closes after this response, whatever was allowed: the application died
sub close_after ($self) { $self->{keep_alive} = 0; return }

# No response can go: the client closed, or went silent, while its body came. The connection
# closes, and the access log has $status.
sub unanswered ($self, $status) {
    @$self{qw(keep_alive status)} = (0, $status);
    return;
}

# The rest a slow reader had not taken went with the connection to the parking process: this
# worker has nothing left to send, and the connection is no longer its own to keep
sub spool_handed ($self) {
    delete($self->{spool})->discard;
    $self->{keep_alive} = 0;
    return;
}

# An answer of the server's own in place of any other, which closes the connection: the
# status's short page, with the reason when a request is refused (a sentence of the server's,
# never the client's bytes); the access log counts its body
sub error ($self, $status, $why = undef) {
    my $body = _error_body($status) . (defined $why ? "The request was refused: $why.\n" : '');
    my $head = sprintf "HTTP/1.%d %d %s\r\nDate: %s\r\n${SERVER}Content-Type: text/plain\r\n"
        . "Content-Length: %d\r\nConnection: close\r\n\r\n",
        $self->{http11} ? 1 : 0,
        $status,
        HTTP::Status::status_message($status) // 'Error',
        http_date(),
        length $body;
    delete $self->{head};

    # The access log's %O and %{Content-Type}o read this head, not the one the application's
    # response would have had (Apache logs its error page's Content-Type too)
    @$self{qw(status keep_alive bytes head_bytes res_headers)}
        = ($status, 0, length $body, length $head, ['Content-Type' => 'text/plain']);
    return $self->write_all($head . $body);
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
sub start ($self, $status, $headers, $body_length = undef) {
    my $http11 = $self->{http11} ? 1 : 0;
    (my $head, $self->{framing}, $self->{length}, $self->{keep_alive}) = response_head(
        $STATUS_LINE[$http11]{$status} //= _status_line($http11, $status),
        $status, $headers, $body_length, $http11,
        $self->{head_only} ? 1 : 0,
        $self->{keep_alive} ? 1 : 0, $SERVER
    );
    @$self{qw(status res_headers head head_bytes)} = ($status, $headers, $head, length $head);
    return $self->{framing};
}

# Writes a complete [status, headers, body] response; false if it could not all go. An array
# body (the usual case, here rather than in a sub of its own: a Perl call costs 1.5k to 3k
# instructions): head and body leave in one write, or what the client did not take at once goes
# as it can within Timeout
sub respond ($self, $res) {
    my ($status, $headers, $body) = @$res;
    return _respond_handle($self, $status, $headers, $body) if ref $body ne 'ARRAY';
    my $http11 = $self->{http11} ? 1 : 0;
    if ($self->{broken}) { start($self, $status, $headers, 0); return 0 }    # Nothing can go
    my ($n, $head, $sent);
    ($n, $head, $self->{framing}, $self->{length}, $self->{keep_alive}, $sent) = write_response(
        $self->{sock},
        $STATUS_LINE[$http11]{$status} //= _status_line($http11, $status),
        $status,
        $headers,
        $body,
        $http11,
        $self->{head_only}  ? 1 : 0,
        $self->{keep_alive} ? 1 : 0,
        $SERVER
    );
    @$self{qw(status res_headers head_bytes)} = ($status, $headers, length $head);
    if (($n // -1) == length($head) + $sent) { $self->{bytes} += $sent; return 1 }
    return written_in_part($self, 0 + $!, $n, $head, $sent, $body);
}

# A response of which one write sent $n bytes (undef: none, with $errno): the rest of its head
# and array body goes as the client takes it, within Timeout
sub written_in_part ($self, $errno, $n, $head, $sent, $body) {
    my $data = $head . ($sent ? join('', @$body) : '');
    return count_sent($self, write_rest($self, $errno, $n, \$data), $sent);
}

# A body that is a handle: sent from a file with sendfile when it is one, else read and sent
# in parts
sub _respond_handle ($self, $status, $headers, $body) {
    my $length  = Plack::Util::content_length($body);
    my $framing = start($self, $status, $headers, $length);
    return !$self->{broken}
        if $framing eq 'length'
        && Perennial::HTTP::Sendfile::send_file($self, $body, $self->{length});
    local $/ = \65536;
    my $first = $framing eq 'none' ? '' : $body->getline // '';
    _send_body($self, $framing, $first, 0);

    if ($framing ne 'none') {
        while (!$self->{broken} && defined(my $chunk = $body->getline)) {
            _send_body($self, $framing, $chunk, 0);
        }
        _send_body($self, $framing, '', 1);
    }
    $body->close;
    return !$self->{broken};
}

# The writer's side (PSGI's streaming interface): the head went with start(), each write() goes
# at once (chunked for HTTP/1.1, raw until the connection closes for HTTP/1.0), close() ends the
# body. The server closes a writer the application forgot.
sub write ($self, $data) {
    return if $self->{closed} || !length $data;
    _send_body($self, $self->{framing}, $data, 0);
}

sub close ($self) {
    return if $self->{closed}++;
    _send_body($self, $self->{framing}, '', 1);
}

sub poll_cb ($self, $cb) { $cb->($self) }

# The response's bytes are written as they come, head included ($head, in place of the one the
# server made), and the connection closes after them: an nph- script's output, which frames
# itself (and has its body even for HEAD, as mod_cgi sends it)
sub pass_through ($self, $head) {
    @$self{qw(head head_bytes keep_alive framing)} = ($head, length $head, 0, 'close');
    return $self;
}

# The status line of a status not seen before (kept by the callers, for the C too), or a die
# for one that cannot end a response: a 1xx is only ever interim (a client reads the next
# response as this request's), and one outside 100 to 599 is no status at all. The
# application's failure, then: 500, an error line, and the connection closes.
sub _status_line ($http11, $status) {
    die "the application's response has status '$status', which cannot end a response "
        . "(a final status is 200 to 599)\n"
        unless $status =~ /\A[2-5][0-9][0-9]\z/;
    return sprintf "HTTP/1.%d %d %s\r\n", $http11 ? 1 : 0, $status,
        HTTP::Status::status_message($status) // 'Unknown';
}

sub _error_body ($status) { "$status " . (HTTP::Status::status_message($status) // 'Error') . "\n" }

# A body framed by its Content-Length gets no more bytes than the head says, and its connection
# ends after it when it had more (cut there) or fewer (the client would wait for the rest, or
# read the next response as this one's): $data, cut to what is left
sub _within_length ($self, $data, $last) {
    my $left = $self->{length} - ($self->{bytes} // 0);    # The body bytes sent so far
    if (length $data > $left) {
        substr($data, $left) = '';
        $self->{keep_alive} = 0;
    }
    $self->{keep_alive} = 0 if $last && length $data < $left;
    return $data;
}

sub _send_body ($self, $framing, $data, $last) {
    my $out = delete($self->{head}) // '';
    if ($framing eq 'chunked') {
        $out .= sprintf("%x\r\n", length $data) . $data . "\r\n" if length $data;
        $out .= "0\r\n\r\n"                                      if $last;
    }
    elsif ($framing eq 'length') { $out .= $data = _within_length($self, $data, $last) }
    elsif ($framing ne 'none')   { $out .= $data }
    my $n = $framing ne 'none' ? length $data : 0;
    return count_sent($self, length $out ? write_all($self, $out) : 1, $n);
}

1;

__END__

=head1 NAME

Perennial::HTTP::Response - write a PSGI response as HTTP/1.x bytes

=head1 SYNOPSIS

    use Perennial::HTTP::Response;
    my $res = Perennial::HTTP::Response->new(sock => $sock, http11 => 1, keep_alive => 1,
        timeout => 60);
    $res->respond([200, ['Content-Type' => 'text/plain'], ["Hello\n"]]);

    # Streaming: the response is the writer too
    $res->start(200, ['Content-Type' => 'text/plain']);
    $res->write("part\n");
    $res->close;

=head1 DESCRIPTION

One response on its way to the client. A PSGI response becomes bytes: an array body goes out in
one C<sendmsg(2)> with the head and a computed Content-Length (L<Perennial::HTTP::Core>'s
C<write_response>), the rest of it within Timeout if the client did not take it all at once;
a file goes by sendfile (one write
with the head when it is 64 KiB or less); another filehandle body in 64 KiB blocks with its
length when it is known; otherwise the body is chunked (HTTP/1.1) or ends with the connection
(HTTP/1.0). HEAD responses carry the head only, and 1xx, 204 and 304 responses never carry a
body. A client must take 64 KiB of it (or all of a smaller one) within C<timeout> seconds.
Write errors (the client went away, or was too slow) are recorded in C<broken>, never thrown;
C<bytes> counts the body bytes that went.

=head1 FUNCTIONS

=head2 plain_response

    return plain_response(404);                                # "404 Not Found\n"
    return plain_response(200, $json, 'Content-Type' => 'application/json');

A whole PSGI response with its Content-Length; C<text/plain> unless the headers say otherwise.

=head2 server_tokens

    Perennial::HTTP::Response::server_tokens('Prod');

ServerTokens: what the C<Server> header says from now on.

=head1 METHODS

=head2 new

    my $res = Perennial::HTTP::Response->new(sock => $sock, http11 => 1, timeout => 60);

Fields: C<sock>, C<http11>, C<head_only>, C<keep_alive> (wanted; false afterwards when the
connection must close), C<timeout>, and whatever the caller keeps with it (C<env>, C<t0>).

=head2 for_request

    my $res = Perennial::HTTP::Response->for_request($sock, $env, $t0, $timeout, $may_spool,
        $keep_alive);

The response to a request: C<new> with the fields the connection loop sets for each request
(C<http11> from the environment's protocol, C<head_only> from its method; C<may_spool> when a
slow reader's rest may wait for the parking process, L<Perennial::HTTP::Delivery>;
C<keep_alive> when the connection may stay open after it). The object is the only writer of
its fields; the loop reads them (C<status>, C<bytes>, C<keep_alive>, C<spool>, C<broken>) once
it is done.

=head2 close_after, unanswered, spool_handed

    $res->close_after;          # the application died: the connection closes after the 500
    $res->unanswered(400);      # the body never came: nothing is sent, the log says 400
    $res->spool_handed;         # the rest went to the parking process with the connection

What the connection loop learns as it goes that ends the connection after this response.

=head2 error

    $res->error(400, 'its path climbs above the root');
    $res->error(500);

An answer of the server's own, plain text, that closes the connection; with a reason, the body
says why the request was refused. Replaces whatever head was prepared.

=head2 respond

    $res->respond([$status, $headers, $body]) or return;

Writes a whole response; false when it could not all go.

=head2 written_in_part

    $res->written_in_part($errno, $n, $head, $body_bytes, $body) or return;

After one write of an array response sent C<$n> bytes of it (undef, with C<$errno>, when it
failed): sends the rest as the client takes it, within Timeout, and counts the body's bytes;
false when it could not all go. C<respond> ends with it, and so does the connection loop in C.

=head2 start

    my $framing = $res->start(200, \@headers, $length_or_undef);

Prepares the head (sent with the first body bytes) and returns the framing chosen: C<length>,
C<chunked>, C<close> or C<none>.

=head2 write, close, poll_cb

    $res->write("part\n");
    $res->close;

PSGI's writer: each write goes at once; close ends the body (once).

=head2 pass_through

    $res->pass_through("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");

The head given replaces the server's, and every C<write> goes to the client unchanged, then the
connection closes: for output that frames itself (an C<nph-> script's, all of which mod_cgi
sends, even for HEAD).

=head2 write_all, finish, send_from_file, broken, too_slow, deadline

    $res->write_all($bytes) or return;
    $res->finish;    # after the response: a spooled rest that did not go to the parking process

Writing to the client within Timeout, and a slow reader's rest spooled and handed to the
parking process: L<Perennial::HTTP::Delivery>.

=cut
