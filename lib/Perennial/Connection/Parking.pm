package Perennial::Connection::Parking;
use v5.36;
use Time::HiRes              ();
use Perennial::HTTP::Core    qw(ready);
use Perennial::HTTP::Refused qw(request_of);

# What the connection loop hands to the parking process (Perennial::Park), and what it takes
# back: a kept-alive connection idle past ParkKeepAliveAfter, a head that came in part, the rest
# of a response its client takes slowly, and a connection that comes back. Perennial::Connection
# inherits these; they work on its state (park, stopping, listener, keep_wait, timeout).

# A connection back from the parking process: a head it began before keeps its time (returned),
# and one whose time ran out there is answered 408 (the parking process saw which limit)
sub resumed ($self, $resumed) {
    $self->{late_head} = $self->{park}->late_limit($resumed->{kind});
    return if $resumed->{kind} eq 'K';

    # Not parked again before this worker has read more of it itself
    $self->{head_back} = "$resumed->{started} " . length $resumed->{buffer};
    return $resumed->{started};
}

# Waits on a kept-alive connection for the next request; false when it is to be closed (idle
# for KeepAliveTimeout, lingering for one sent as it ran out, or closed by the client) or was
# parked: with parking on, the worker waits ParkKeepAliveAfter, then gives the connection to the
# parking process, which holds it for the rest of KeepAliveTimeout, and goes back to its
# listeners. (It keeps the connection when the channel is full, and when it is stopping: the
# next request is then served here, with Connection: close.)
sub next_request ($self, $sock, $served) {
    $self->{board}->state($self->{slot}, 'K');
    my $now  = Time::HiRes::time();
    my $park = !${$self->{stopping}} && $self->{park};
    return 1 if ready($sock, $now + ($park ? $self->{park_wait} : $self->{keep_wait}));
    return $self->_still_idle($sock, $served, $now, $park);
}

# A kept-alive connection still idle after the first wait ($now, when it began): ParkKeepAliveAfter
# with parking on ($park), when it goes to the parking process or, when the channel is full,
# waits for the rest of KeepAliveTimeout here; else KeepAliveTimeout, and it is closed lingering
sub _still_idle ($self, $sock, $served, $now, $park) {
    if ($park) {
        my $until = $now + $self->{keep_wait};
        my %state = (listener => $self->{listener}, served => $served, until => $until);
        if ($self->{park}->park($sock, \%state)) {
            $self->{parked} = 1;
            return 0;
        }
        return 1 if ready($sock, $until);
    }
    $self->{linger} = 1;
    return 0;
}

# The rest of a complete response that its client takes slowly (its spool, from where it stands)
# goes with the connection to the parking process, which writes it as it is taken, then keeps
# the connection as a parked one when it is kept alive ($served requests on it), or closes it.
# When it cannot go (the worker stops, the channel is full), the worker writes it itself; so it
# does when the client sent more requests after it ($pipelined bytes of them read already),
# which are the worker's to serve next: the parking process would read the connection's next
# bytes as a new request, and the ones read here would be lost (a request's body read as a
# request of its own).
sub hand_rest ($self, $c, $served, $pipelined = 0) {
    my ($file, $left) = $c->{spool}->to_hand;
    return $c->finish if ${$self->{stopping}} || !$file || $pipelined;
    my %state = (
        listener => $self->{listener},
        kind     => 'W',
        quiet    => $self->{timeout},
        file     => $file,
        left     => $left,
        buffer   => request_of($c->{env}),    # For the parking process's log line, should it fail
    );

    # Kept alive, it waits in the parking process for its next request once the rest is sent
    @state{qw(idle served)} = ($self->{keep_wait}, $served) if $c->{keep_alive};
    return $c->finish unless $self->{park}->park($c->{sock}, \%state);
    $c->spool_handed;
    $self->{parked} = 1;
    $self->{log}->info('response handed to the parking process, the client takes it slowly: '
            . "$left bytes left of it ($state{buffer})");
    return 1;
}

# A head that came in part goes to the parking process, which reads the rest (true when it
# went): not when parking is off, the worker stops, it is too long to carry, or it just came
# back from there
sub park_head ($self, $sock, $buf_ref, $t0, $served) {
    my $park = $self->{park_heads} && $self->{park};
    return 0 if !$park || ${$self->{stopping}} || length $$buf_ref > $park->head_room;

    # One the parking process gave back as whole, or ended, is read on here first: it may have
    # seen the end of the stream, which only a read here can find
    return 0 if ($self->{head_back} // '') eq "$t0 " . length $$buf_ref;
    my $limit = $self->{limits}{read}{header};
    my %state = (
        listener => $self->{listener},
        served   => $served,
        kind     => 'H',
        started  => $t0,
        quiet    => $self->{timeout},
        buffer   => $$buf_ref,
        %$limit{qw(first max rate)},
    );
    return 0 unless $park->park($sock, \%state);
    $self->{parked} = 1;
    return 1;
}

1;

__END__

=head1 NAME

Perennial::Connection::Parking - what a connection leaves to the parking process

=head1 DESCRIPTION

The parking half of L<Perennial::Connection>, which inherits it: the wait for a kept-alive
connection's next request (ParkKeepAliveAfter, then the parking process, or KeepAliveTimeout
here when parking is off or its channel is full), a partial head and a slow reader's rest handed
over with the connection, and the state of one that comes back. The loop in C (F<xs/Loop.c>)
calls C<_still_idle> by name. Its methods are steps of the connection loop, called by it on
the connection object.

=head1 METHODS

=head2 next_request

    last unless $conn->next_request($sock, $served);

Waits for a kept-alive connection's next request; false when the connection is to close or
went to the parking process.

=head2 hand_rest

    $conn->hand_rest($response, $served, $pipelined) if $response->{spool};

A slow reader's rest goes with the connection to the parking process (or is written here when
it cannot go, or when C<$pipelined> bytes of the client's next requests were read already:
those are this worker's to serve).

=head2 park_head

    return () if $conn->park_head($sock, \$buf, $t0, $served);

A head that came in part goes to the parking process to wait for its rest; true when it went.

=head2 resumed

    my $began = $conn->resumed($state);

A connection back from the parking process: the time of the head it began, if it began one.

=cut
