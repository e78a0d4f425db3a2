package Perennial::Connection::Reads;
use v5.36;
use Errno                        qw(EINTR);
use Time::HiRes                  ();
use Perennial::HTTP::Body        qw(body_framing);
use Perennial::HTTP::Core        qw(parse_plain ready);
use Perennial::HTTP::Input       qw(input_of receive_body);
use Perennial::HTTP::ReadTimeout qw(read_deadline);
use Perennial::HTTP::Refused     qw(head_failed judged_head refusal_line request_of);

# What the connection loop reads of a request when the loop in C (xs/Loop.c) leaves it to the
# Perl: its head (begun, read until whole, judged), its body, and the refusals of either, with
# the limits of RequestReadTimeout and Timeout. Perennial::Connection inherits these; they work
# on its state (limits, timeout, board, slot, log) and call its parking (park_head).

my $READ_SIZE = 65_536;

# Plain heads are read in C when it was built (in Perl, the judge reads every head)
my $PLAIN_IN_C = Perennial::HTTP::Core::implementation() eq 'C';

# A request the Perl loop begins itself (the first of a connection back from the parking
# process, or every one without the loop in C): its time, what the first read returned, and
# its head when it came whole with that read and is plain (read in C). Anything else, and what
# that read returned, is read_head's. (One the accept loop in C began, $began is what it has.)
sub begin_request ($self, $sock, $buf_ref, $base, $peer, $began) {
    return @$began if ref $began;
    $self->{board}->state($self->{slot}, 'R');
    my $t0 = $began // Time::HiRes::time();
    return ($t0) if $self->{late_head};
    my $n = length $$buf_ref || sysread $sock, $$buf_ref, $READ_SIZE;
    return ($t0, $n) unless $PLAIN_IN_C && $n && index($$buf_ref, "\r\n\r\n") >= 0;
    return ($t0, $n, parse_plain($$buf_ref, $base, $peer, $self->{limits}));
}

# Reads until a whole head is in $buf; returns its length and the request's environment (a copy
# of the listener's and the connection's keys, and the request's), or (0, error status, env),
# or () to close, or when the connection went to the parking process. $n is what the read the
# caller made returned (the buffer's length when it had bytes already). A head that came in part
# waits for the rest there, not in a worker; read here (no parking, or too long to carry), it
# gets RequestReadTimeout's header limit from $t0, as it grows with the bytes that come (or
# Timeout in all from its first byte), empty lines before it included.
sub read_head ($self, $sock, $buf_ref, $base, $peer, $t0, $served, $n) {
    return head_failed(undef, $base, $peer, $buf_ref, 408, delete $self->{late_head})
        if $self->{late_head};
    my ($scan, $env);
    while (1) {
        $n //= $self->_read_again($sock, $buf_ref);
        if (!$n) {
            return () unless length $$buf_ref;
            return head_failed($env, $base, $peer, $buf_ref, defined $n ? 400 : 408, 'Timeout');
        }

        # (A whole plain head at the first look was read in C by the caller: the judge's here)
        my ($len, $status)
            = judged_head($buf_ref, $env //= {%$base, %$peer}, \$scan, $self->{limits});
        return $self->_judged($len, $env) if $len;

        # The parser empties the environment of a head it cannot read (a target whose "%"
        # escapes do not decode): the refusal's log line and access line name the client
        return ($len, $status, {%$base, %$peer, %$env}) if $status;
        return () if $self->park_head($sock, $buf_ref, $t0, $served);
        my $late = $self->_head_wait($sock, $buf_ref, $t0);
        return head_failed($env, $base, $peer, $buf_ref, 408, $late) if $late;
        $n = sysread $sock, $$buf_ref, $READ_SIZE, length $$buf_ref;
    }
}

# A head the judge found good: said in the log when fields of it were left out (only the judge
# reads a head with an underscore in a field's name: the C leaves it to it)
sub _judged ($self, $len, $env) {
    $self->{log}->info('header field left out (a name with an underscore, which would read as one '
            . "with a hyphen): $env->{'perennial.dropped'} ("
            . request_of($env) . ')')
        if $env->{'perennial.dropped'};
    return ($len, 0, $env);
}

# Waits for more of a head (false when it can be read): no later than RequestReadTimeout's
# header limit, nor longer than Timeout in silence; which one ran out, when one did
sub _head_wait ($self, $sock, $buf_ref, $t0) {
    my $now   = Time::HiRes::time();
    my $until = read_deadline($self->{limits}{read}{header}, $t0, length $$buf_ref);
    my $quiet = $now + $self->{timeout};
    return 0 if ready($sock, defined $until && $until < $quiet ? $until : $quiet);
    return defined $until && $until <= Time::HiRes::time() ? 'RequestReadTimeout' : 'Timeout';
}

# The body of a request with a length or a Transfer-Encoding, as its psgi.input; false when it
# was refused or the client closed. (A length of 0 is no body: _answer gives the empty input.)
sub read_body ($self, $c, $buf_ref, $env) {
    my ($kind, $length) = body_framing($env, $self->{limits});
    return 1                                               if $kind eq 'none';
    return $self->_refuse($c, $kind, $env, 'refused body') if $kind =~ /\A\d+\z/;

    # Any other Expect was refused with the head (Perennial::HTTP::Request)
    $c->write_all("HTTP/1.1 100 Continue\r\n\r\n")
        if $c->{http11} && !length $$buf_ref && length($env->{HTTP_EXPECT} // '');
    my $body   = {data => '', length => 0};
    my $read   = $self->_body_reader($c->{sock}, $buf_ref, $body);
    my $status = receive_body($read, $buf_ref, $body, $kind, $length, $env, $self->{limits});
    if ($status > 1) {    # Refused by dechunk, with its reason, or late
        $env->{'perennial.refused'}
            //= "its body did not arrive within $body->{late} ($body->{length} bytes came)";
        return $self->_refuse($c, $status, $env, 'bad or late body');
    }
    if (!$status) {       # The client closed: no one to answer, but the log says so
        $self->{log}->info("client closed the connection in its request body, after "
                . "$body->{length} bytes of it ("
                . request_of($env)
                . ')');
        $c->unanswered(400);
        return 0;
    }
    $env->{CONTENT_LENGTH} = $body->{length};
    delete $env->{HTTP_TRANSFER_ENCODING};
    $env->{'psgi.input'} = input_of($body);
    return 1;
}

# The reads of a body: each waits no later than RequestReadTimeout's body limit, counted from
# the first and growing with the bytes that came (then undef, as a read past Timeout gives)
sub _body_reader ($self, $sock, $buf_ref, $body) {
    my $limit = $self->{limits}{read}{body};
    my $start = Time::HiRes::time();
    $body->{late} = 'Timeout';
    return sub {
        my $until = read_deadline($limit, $start, $body->{length} + length $$buf_ref);

        # A poll only when the limit comes before the socket's own Timeout would end the read
        if (   defined $until
            && $until < Time::HiRes::time() + $self->{timeout}
            && !ready($sock, $until))
        {
            $body->{late} = 'RequestReadTimeout';
            return;
        }
        return $self->_read($sock, $buf_ref);
    };
}

# After a read that failed: undef on timeout or error; a signal never ends a request (as _read)
sub _read_again ($self, $sock, $buf_ref) { $! == EINTR ? $self->_read($sock, $buf_ref) : undef }

# One read; undef on timeout or error, 0 at end of file. A signal never ends a request: a
# connection just accepted carries a request the client is sending, so it is served.
sub _read ($self, $sock, $buf_ref) {
    while (1) {
        my $n = sysread $sock, $$buf_ref, $READ_SIZE, length $$buf_ref;
        return $n if defined $n;
        next      if $! == EINTR;
        return;
    }
}

# A refusal: its log line (Perennial::HTTP::Refused's, at warn, so that a site that moved in
# with Apache's LogLevel warn sees it, as Apache logs a path above the root at error) and the
# answer, whose body says why in the server's words
sub _refuse ($self, $c, $status, $env, $why) {

    # In the logs of the virtual host it came to, as Apache writes it (its access log line too:
    # the connection's end reads perennial.log)
    $env->{'perennial.log'} //= $self->{log_of}->($env) if $self->{log_of};
    ($env->{'perennial.log'} // $self->{log})->warn(refusal_line($why, $status, $env));
    $c->error($status, $env->{'perennial.refused'});
    return 0;
}

1;

__END__

=head1 NAME

Perennial::Connection::Reads - a request's head and body, read on a connection

=head1 DESCRIPTION

The reading half of L<Perennial::Connection>, which inherits it: a request head read until
whole (a partial one may go to the parking process to wait for its rest), judged by
L<Perennial::HTTP::Refused>, and refused with its status and a log line when it is bad or late;
a body by its length or its chunks, with C<Expect: 100-continue>, RequestReadTimeout's body
limit and LimitRequestBody. Its methods are steps of the connection loop, called by it on
the connection object.

=head1 METHODS

=head2 begin_request

    my ($t0, $n, $len, $env) = $conn->begin_request($sock, \$buf, $base, $peer, $began);

A request the Perl loop begins: its time, what the first read returned, and its head's length
and environment when it came whole with that read and is plain.

=head2 read_head

    my ($len, $status, $env) = $conn->read_head($sock, \$buf, $base, $peer, $t0, $served, $n);

Reads until a whole head is in the buffer: its length and environment, or (0, the status of
its refusal, env), or () when the connection closed or went to the parking process.

=head2 read_body

    $conn->read_body($response, \$buf, $env) or return;

The request's body as its C<psgi.input>; false when it was refused (answered) or the client
closed.

=cut
