package Perennial::HTTP::Delivery;
use v5.36;
use Errno                 qw(EAGAIN EINTR);
use Exporter              qw(import);
use IO::Handle            ();
use Socket                qw(MSG_DONTWAIT MSG_NOSIGNAL);
use Time::HiRes           ();
use Perennial::HTTP::Core qw(ready);
use Perennial::HTTP::Spool;

# How a response's bytes reach a client that may be slow: every write within Timeout for each
# 64 KiB, and a second of waiting at most before the rest goes into a spool (when a slow reader's
# rest may go to the parking process: may_spool), which the connection loop hands over with the
# connection once the response is complete. The functions are the response's own methods
# (Perennial::HTTP::Response imports them): they read and write its fields (sock, timeout,
# bytes, broken, too_slow, unsent, spool, slow, spool_full, may_spool, keep_alive).

our @EXPORT_OK = qw(broken count_sent deadline finish send_from_file too_slow write_all write_rest);

my $TOO_SLOW    = 'the client did not take the response within Timeout';
my $PER_TIMEOUT = 65_536;    # Bytes a client must take within each Timeout
my $SPOOL_AFTER = 1;         # Seconds a worker writes to a slow reader before it spools the rest

# Writes all of $data; false when the client went away or was too slow: Timeout ($self->{timeout})
# bounds the whole write of up to 64 KiB, and each further 64 KiB of a larger one. The socket's
# own send timeout starts again with every partial write, so a reader that takes a byte now and
# then would hold the worker for as long as it liked; a slow but real client takes 64 KiB in
# Timeout (60 s: 1 KiB/s).
sub write_all ($self, $data) {
    return _unsent($self, length $data) if $self->{broken};
    return _after_spool($self, $data)   if $self->{spool};
    my $n = send $self->{sock}, $data, MSG_DONTWAIT | MSG_NOSIGNAL;    # Never waits here
    return 1 if ($n // -1) == length $data;                            # The usual case: one write
    return write_rest($self, 0 + $!, $n, \$data);
}

# A write that failed: how much of it did not go ($self->{unsent}, for the access log's count)
sub _unsent ($self, $bytes) {
    $self->{unsent} = $bytes;
    return 0;
}

# Counts $n bytes of body as sent, less what a failed write left unsent; returns $ok
sub count_sent ($self, $ok, $n) {
    my $lost = $ok ? 0 : $self->{unsent} // $n;
    $self->{bytes} += $n - ($lost < $n ? $lost : $n);
    return $ok;
}

# The rest of a write the client is slow to take: without blocking, each part when the socket
# can take it, within Timeout for each 64 KiB. When a slow reader's rest may go to the parking
# process (may_spool), after a second of it what is left goes into a spool instead (true: the
# response goes on, and the connection loop hands the spool over once it is complete). Once a response has been spooled, its client is
# known to be slow: the worker does not wait for it again, what it does not take at once is
# spooled at once.
sub _write_rest ($self, $data_ref, $off) {
    my $sock = $self->{sock};
    IO::Handle::blocking($sock, 0);
    my ($ok, $taken, $until) = (1, $off, Time::HiRes::time() + ($self->{timeout} // 60));
    my $spool_at
        = $self->{may_spool} && Time::HiRes::time() + ($self->{slow} ? 0 : $SPOOL_AFTER);
    while ($off < length $$data_ref) {
        if ($spool_at && Time::HiRes::time() >= $spool_at) {
            undef $spool_at;
            last if _spooled($self, $data_ref, $off);
        }
        if (!ready($sock, $spool_at && $spool_at < $until ? $spool_at : $until, 1)) {
            next if $spool_at;    # Time to spool it
            $ok = too_slow($self);
            last;
        }
        my $n = syswrite $sock, $$data_ref, length($$data_ref) - $off, $off;
        if (defined $n) { $off += $n; $until = deadline($self, $until, \$taken, $n); next }
        next if $! == EINTR || $! == EAGAIN;
        $ok = broken($self, "$!");
        last;
    }
    IO::Handle::blocking($sock, 1);
    return $ok || _unsent($self, length($$data_ref) - $off);
}

# The rest of a write from $off goes into a new spool (true), unless there is no room for it
# (then the worker writes on itself)
sub _spooled ($self, $data_ref, $off) {
    $self->{spool} = Perennial::HTTP::Spool->of_bytes($data_ref, $off);
    return $self->{slow} = 1 if $self->{spool};
    $self->{spool_full} = 1;
    return 0;
}

# A write while a spool holds the response's rest: it goes after that rest, and the socket takes
# what it can at once without the worker waiting; once the spool is empty, writes go straight
# to the socket again. A spool at its most is sent first by the worker itself, within Timeout.
sub _after_spool ($self, $data) {
    my $spool = $self->{spool};
    if (!$spool->add($data)) {
        $self->{spool_full} = 1;
        delete $self->{spool};
        my $ok = _drain($self, $spool);
        $spool->discard;
        return $ok ? write_all($self, $data) : _unsent($self, length $data);
    }
    IO::Handle::blocking($self->{sock}, 0);
    my $n = $spool->send_some($self->{sock});
    IO::Handle::blocking($self->{sock}, 1);
    return broken($self, defined $n ? 'file shorter than its length' : "$!") if ($n // -1) < 0;
    delete($self->{spool})->discard                                          if !$spool->left;
    return 1;
}

# Sends what $spool holds, each part when the socket can take it, 64 KiB within each Timeout;
# with $spool_at, only until then (true), leaving the rest in it. What could not go is taken
# off the count of bytes sent.
sub _drain ($self, $spool, $spool_at = undef) {
    my $sock = $self->{sock};
    IO::Handle::blocking($sock, 0);
    my ($ok, $until, $taken) = (1, Time::HiRes::time() + ($self->{timeout} // 60), 0);
    while ($spool->left) {
        my $n = $spool->send_some($sock);
        if (($n // -1) < 0) {
            $ok = broken($self, defined $n ? 'file shorter than its length' : "$!");
            last;
        }
        if ($n) { $until = deadline($self, $until, \$taken, $n); next }
        next if ready($sock, $spool_at && $spool_at < $until ? $spool_at : $until, 1);
        last if $spool_at && Time::HiRes::time() >= $spool_at;    # The rest stays in the spool
        $ok = too_slow($self);
        last;
    }
    IO::Handle::blocking($sock, 1);
    return 1 if $ok;
    my $lost = $spool->left;
    $self->{bytes} -= $lost < $self->{bytes} ? $lost : $self->{bytes};
    return 0;
}

# The response is complete, and what a slow reader has not taken yet (a spool) could not go to
# the parking process: the worker sends it itself, within Timeout. False when the response could
# not all go.
sub finish ($self) {
    my $spool = delete $self->{spool} or return !$self->{broken};
    my $ok    = _drain($self, $spool);
    $spool->discard;
    return $ok;
}

# $length bytes of the file $fh from where it stands, by sendfile (the file itself as a spool):
# for a second at most when a slow reader's rest may go to the parking process (what is left
# stays in the spool for finish), otherwise within Timeout for each 64 KiB
sub send_from_file ($self, $fh, $length) {
    my $spool = Perennial::HTTP::Spool->of_file($fh, $length) or return broken($self, "$!");
    $self->{bytes} += $length;
    my $ok = _drain($self, $spool, $self->{may_spool} && Time::HiRes::time() + $SPOOL_AFTER);
    if ($ok && $spool->left) { $self->{spool} = $spool }
    else                     { $spool->discard }
    return $ok;
}

# The deadline of a write after $n more bytes went: Timeout later for each 64 KiB taken
sub deadline ($self, $until, $taken_ref, $n) {
    return $until if ($$taken_ref += $n) < $PER_TIMEOUT;
    $$taken_ref = 0;
    return Time::HiRes::time() + ($self->{timeout} // 60);
}

# The client does not take the response: given up on, and said so ($self->{too_slow})
sub too_slow ($self) {
    $self->{too_slow} = 1;
    return broken($self, $TOO_SLOW);
}

# The response cannot be finished: the connection ends after it (false, for the caller's return)
sub broken ($self, $why) {
    $self->{broken}     = $why;
    $self->{keep_alive} = 0;
    return 0;
}

# The rest of a write the client did not take at once: $n bytes of it went, or none ($errno
# says why: broken, unless it was only interrupted or would have blocked)
sub write_rest ($self, $errno, $n, $data_ref) {
    if (!defined $n && $errno != EINTR && $errno != EAGAIN) {
        local $! = $errno;
        broken($self, "$!");
        return _unsent($self, length $$data_ref);
    }
    return _write_rest($self, $data_ref, $n // 0);
}

1;

__END__

=head1 NAME

Perennial::HTTP::Delivery - a response's bytes to a client that may be slow

=head1 SYNOPSIS

    use Perennial::HTTP::Delivery qw(write_all finish);    # as methods of a response
    $res->write_all($bytes) or return;
    $res->finish;    # the response is complete: the worker sends a spooled rest itself

=head1 DESCRIPTION

The writing half of L<Perennial::HTTP::Response>: its methods, kept apart. Every write is
bounded by Timeout for each 64 KiB the client takes. When a slow reader's rest may go to the
parking process (the response's C<may_spool>), a worker waits for its client a second at most:
what the client has not taken then goes into a spool (L<Perennial::HTTP::Spool>), and later
writes add to it (the client taking what it can meanwhile). Once the response is complete, the
connection loop (L<Perennial::Connection>) hands the spool over with the connection; when it
cannot go, C<finish> sends it within Timeout.

=head1 FUNCTIONS

=head2 write_all

    $res->write_all($bytes) or return;

Writes everything within the deadline, retrying after signals; false when the client has gone
or was too slow (C<broken> says which).

=head2 write_rest, count_sent

    return $res->count_sent($res->write_rest(0 + $!, $n, \$data), $body_bytes);

The rest of a write that did not all go at once; and the body bytes counted as sent, less what
a failed write left.

=head2 finish, send_from_file

    $res->send_from_file($fh, $length);
    $res->finish;

A file's bytes by sendfile (the file itself as a spool); the response's end, where a spool
that could not be handed over is sent by the worker.

=head2 broken, too_slow, deadline

    return $res->broken('file shorter than its length');
    return $res->too_slow;    # broken, and too_slow set: the log says so
    $until = $res->deadline($until, \$taken, $n);

Marks the response as not finished (the connection closes after it); and the write deadline
after C<$n> more bytes went (Timeout later for each 64 KiB).

=cut
