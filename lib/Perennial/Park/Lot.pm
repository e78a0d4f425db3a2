package Perennial::Park::Lot;
use v5.36;
use Errno                  qw(EAGAIN EINTR);
use IO::Handle             ();
use Perennial::HTTP::Close qw(pending);
use Perennial::HTTP::Spool ();
use Time::HiRes            ();
use Linux::Epoll;
use Perennial::HTTP::ReadTimeout qw(read_deadline);

# The parking process: it holds the connections that workers gave up while they are idle, one
# epoll over all of them, and hands each on to the workers as soon as it is readable (its next
# request is arriving); and those whose head came in part, until it is whole. One that stays idle past the time its worker gave it (KeepAliveTimeout)
# is closed, as a worker would close it; one the client closed is closed here, no worker woken.
# It holds nothing else: no application, no configuration, no request's data.

my $MAX_WAIT   = 1;         # Seconds between looks at the stop flag and the board, at the most
my $HEAD_LOOK  = 0.1;       # ... and while heads are read, or ready ones wait for a worker
my $HAND_OVER  = 5;         # Seconds to put back what it holds, as its successor takes it
my $WRITE_SIZE = 65_536;    # A write's worth, and what a client must take a Timeout

# park: the channels (Perennial::Park); board: the scoreboard, for the counts of parked
# connections and spooled bytes; log; stopping: a reference to the flag its signal handlers set
sub new ($class, %args) {
    my $self = bless {
        %args{qw(park board log stopping)},
        epoll   => Linux::Epoll->new,
        parked  => {},                  # fileno => [handle, state]
        order   => [],        # [until, fileno, handle] in the order they came: the first to expire
        heads   => {},        # fileno => 1: connections whose head is being read here
        writers => {},        # fileno => 1: those whose response's rest is written here
        waiting => [],        # Ready, but the ready channel was full: [handle, state]
        spooled => 0,         # Bytes of the spools it holds (the scoreboard's count)
        room    => _room(),
    }, $class;
    $self->{epoll}->add($self->{park}->parked_handle, 'in', sub ($events) { $self->_collect });
    return $self;
}

# Descriptors it may hold, from its open files limit, less a few of its own (logs, epoll, the
# channels)
sub _room () {
    open(my $fh, '<', '/proc/self/limits') or return 1000;
    my ($soft) = join('', <$fh>) =~ /^Max open files\s+(\d+)/m;
    return ($soft // 1024) - 32;
}

sub run ($self) {
    my $stopping = $self->{stopping};
    local $SIG{PIPE} = 'IGNORE';    # sendfile(2) to a client gone has no MSG_NOSIGNAL
    while (!$$stopping) {
        $self->{epoll}->wait(64, $self->_wait);
        $self->_expire;
        $self->_hand_on_waiting if @{$self->{waiting}};
        my $count = keys %{$self->{parked}};

        # As they change (or as another process wrote them: a predecessor leaving, the manager)
        $self->{board}->parked($count)            if $count != $self->{board}->parked;
        $self->{board}->spooled($self->{spooled}) if $self->{spooled} != $self->{board}->spooled;
    }
    $self->_leave($$stopping);
    return 0;
}

# How long to sleep: until the first connection expires, a second at most, a tenth while heads
# are read (their limits move as their bytes come) or connections wait for a worker
sub _wait ($self) {
    return $HEAD_LOOK if %{$self->{heads}} || %{$self->{writers}} || @{$self->{waiting}};
    my $first = $self->{order}[0] or return $MAX_WAIT;
    my $wait  = $first->[0] - Time::HiRes::time();
    return $wait < 0 ? 0 : $wait > $MAX_WAIT ? $MAX_WAIT : $wait;
}

# Connections the workers gave up: an idle one waits for its next request here, unless its
# bytes came already; a head that came in part waits for the rest
sub _collect ($self) {
    while (1) {
        if (keys %{$self->{parked}} >= $self->{room}) { $self->_full; return }
        my ($sock, $state) = eval { $self->{park}->collect } or do {
            $self->{log}->error("parking process $$: $@") if $@;
            return;
        };

        # Its next request's bytes came, its head is whole, or its time ran out (what a
        # predecessor put back): on to a worker
        if (   ($state->{kind} eq 'K' && length $state->{buffer})
            || ($state->{kind} eq 'H' && _whole_head($state->{buffer}))
            || $self->{park}->late_limit($state->{kind}))
        {
            $self->_hand_on($sock, $state);
            next;
        }
        my $fd = fileno $sock;
        $self->{parked}{$fd} = [$sock, $state];
        if ($state->{kind} eq 'W') { $self->_write_for($fd, $sock, $state); next }
        if ($state->{kind} eq 'H') {
            $self->{heads}{$fd} = 1;
            $state->{heard} = Time::HiRes::time();
        }
        else { push @{$self->{order}}, [$state->{until}, $fd, $sock] }
        $self->{epoll}->add($sock, 'in', sub ($events) { $self->_readable($fd) });
    }
}

# Bytes, or the end. An idle connection's next request goes on to a worker at once (a
# connection the client closed is closed here); a head's bytes are read here until it is whole
sub _readable ($self, $fd) {
    my $held = $self->{parked}{$fd} or return;
    my ($sock, $state) = @$held;
    return $self->_read_head($fd, $sock, $state) if $state->{kind} eq 'H';
    $self->_unpark($fd, $sock);
    return CORE::close($sock) unless pending($sock);
    $self->_hand_on($sock, $state);
}

# A head's next bytes (the socket is readable, so the read does not wait). It goes on to a worker
# once it is whole, too long to carry, or ended by the client; a client that closed before
# sending a byte is closed here.
sub _read_head ($self, $fd, $sock, $state) {
    my $n = sysread(
        $sock, $state->{buffer},
        $self->{park}->head_room - length $state->{buffer},
        length $state->{buffer}
    );
    return                                if !defined $n && ($! == EAGAIN || $! == EINTR);
    $state->{heard} = Time::HiRes::time() if $n;
    return
           if $n
        && !_whole_head($state->{buffer})
        && length $state->{buffer} < $self->{park}->head_room;
    $self->_unpark($fd, $sock);
    return CORE::close($sock) if !$n && !length $state->{buffer};
    $self->_hand_on($sock, $state);
}

# The rest of a response that its client takes slowly: sent from its file (a spool,
# Perennial::HTTP::Spool) as the socket takes it, Timeout for each 64 KiB as a worker writes, then
# the connection is closed or kept. The socket does not block meanwhile (sendfile has no flag
# for that). A spool (an anonymous file: no name links to it) counts its size, on disk until it
# closes, against ParkSpoolLimit.
sub _write_for ($self, $fd, $sock, $state) {
    my $spool = Perennial::HTTP::Spool->of_file($state->{file}, $state->{left});
    @$state{qw(spool taken due)} = ($spool, 0, Time::HiRes::time() + $state->{quiet});
    my ($links, $size) = (stat $state->{file})[3, 7];
    $self->{spooled} += $state->{disk} = $links ? 0 : $size // 0;
    $self->{writers}{$fd} = 1;
    IO::Handle::blocking($sock, 0);
    $self->{epoll}->add($sock, 'out', sub ($events) { $self->_writable($fd) });
}

sub _writable ($self, $fd) {
    my $held = $self->{parked}{$fd} or return;
    my ($sock, $state) = @$held;
    my $spool = $state->{spool} or return $self->_written($fd, $sock, $state, -3);
    while ($spool->left) {
        my $n = $spool->send_some($sock);
        return $self->_written($fd, $sock, $state, -1) if !defined $n;    # The client went
        return $self->_written($fd, $sock, $state, -3) if $n < 0;
        return                                         if !$n;            # Full for now
        next                                           if ($state->{taken} += $n) < $WRITE_SIZE;
        @$state{qw(taken due)} = (0, Time::HiRes::time() + $state->{quiet});
    }
    return $self->_written($fd, $sock, $state, 0);
}

# A response's rest all sent (0), or not ($how: -1 the client went, -2 too slow, -3 the file
# ended first). A kept-alive connection then waits here for its next request as any parked one;
# any other ends
my %CUT = (
    -1 => 'the client went',
    -2 => 'the client did not take the response within Timeout',
    -3 => 'its file is shorter than its length',
);

sub _written ($self, $fd, $sock, $state, $how) {
    CORE::close(delete $state->{file});
    $self->{spooled} -= delete $state->{disk};
    delete @$state{qw(spool taken due)};
    IO::Handle::blocking($sock, 1);    # As a worker expects it
    if (!$how && $state->{idle}) {
        delete $self->{writers}{$fd};
        @$state{qw(kind until buffer)} = ('K', Time::HiRes::time() + $state->{idle}, '');
        push @{$self->{order}}, [$state->{until}, $fd, $sock];
        $self->{epoll}->modify($sock, 'in', sub ($events) { $self->_readable($fd) });
        return;
    }
    $self->_unpark($fd, $sock);
    $self->{log}->info("response cut short, $CUT{$how} ($state->{buffer}), after its hand-over "
            . 'to the parking process')
        if $how < 0;
    shutdown($sock, 1);
    CORE::close($sock);
}

# The end of a head (a blank line, as CRLF or a bare LF: the worker judges which it may be)
sub _whole_head ($buf) { index($buf, "\n\r\n") >= 0 || index($buf, "\n\n") >= 0 }

# As many connections as it has descriptors for: it takes no more from the channel until some
# go, and the workers keep theirs meanwhile (the channel fills, and their park fails)
sub _full ($self) {
    return if $self->{full}++;
    $self->{epoll}->delete($self->{park}->parked_handle);
    $self->{log}->warn("parking process $$ holds $self->{room} connections, as many as its "
            . 'open files limit allows: workers keep their idle connections until some go');
}

sub _unpark ($self, $fd, $sock) {
    delete $self->{parked}{$fd};
    delete $self->{heads}{$fd};
    delete $self->{writers}{$fd};
    $self->{epoll}->delete($sock);
}

sub _hand_on ($self, $sock, $state) {
    if (!@{$self->{waiting}} && $self->{park}->hand_on($sock, $state)) {
        CORE::close($sock);
        return;
    }

    # The workers are all busy and the channel is full: it waits its turn here
    push @{$self->{waiting}}, [$sock, $state];
}

sub _hand_on_waiting ($self) {
    my $waiting = $self->{waiting};
    while (my $next = shift @$waiting) {
        next if $self->{park}->hand_on(@$next) && CORE::close($next->[0]);
        unshift @$waiting, $next;
        return;
    }
}

# Those idle past their time are closed, as a worker closes a connection after KeepAliveTimeout;
# a head past RequestReadTimeout, or silent for Timeout, goes to a worker, to be answered 408
# and logged
sub _expire ($self) {
    my ($order, $parked) = @$self{qw(order parked)};
    my $now = Time::HiRes::time();
    $self->_expire_writes($now);
    $self->_expire_heads($now);
    while (@$order && $order->[0][0] <= $now) {
        my (undef, $fd, $sock) = @{shift @$order};
        my $held = $parked->{$fd};
        next if !$held || $held->[0] != $sock;    # Gone on, or the number reused since
        $self->_unpark($fd, $sock);

        # A request that came at the last moment is served, not reset by the close
        if (pending($sock)) {
            $self->_hand_on($sock, $held->[1]);
            next;
        }
        CORE::close($sock);
    }
    if ($self->{full} && keys %$parked < $self->{room}) {    # Room again
        $self->{full} = 0;
        $self->{epoll}->add($self->{park}->parked_handle, 'in', sub ($events) { $self->_collect });
    }
}

# A response's rest that its client has not taken 64 KiB of within Timeout: given up
sub _expire_writes ($self, $now) {
    for my $fd (keys %{$self->{writers}}) {
        my ($sock, $state) = @{$self->{parked}{$fd}};
        $self->_written($fd, $sock, $state, -2) if $state->{due} <= $now;
    }
}

# A head past RequestReadTimeout (X), or silent for Timeout (T): to a worker, for its 408
sub _expire_heads ($self, $now) {
    for my $fd (keys %{$self->{heads}}) {
        my ($sock, $state) = @{$self->{parked}{$fd}};
        my $until = read_deadline($state, $state->{started}, length $state->{buffer});
        my $late
            = defined $until  && $until <= $now                            ? 'X'
            : $state->{quiet} && $state->{heard} + $state->{quiet} <= $now ? 'T'
            :                                                                undef;
        next unless $late;
        $self->_unpark($fd, $sock);
        $state->{kind} = $late;
        $self->_hand_on($sock, $state);
    }
}

# A response's rest keeps its place for a successor: its file stands at what is still to go
# (what the message carries), and its socket blocks again
sub _unread ($sock, $state) {
    my $spool = delete $state->{spool} or return;
    @$state{qw(file left)} = $spool->to_hand;
    IO::Handle::blocking($sock, 1);
    return;
}

# Told to stop. A graceful stop ('graceful') puts what it holds back into the channel, where
# a successor (after a hot upgrade, a new parking process) finds it; a stop closes it all.
sub _leave ($self, $how) {
    my @held  = (values(%{$self->{parked}}), @{$self->{waiting}});
    my $kept  = 0;
    my $until = Time::HiRes::time() + $HAND_OVER;
    for my $held (@held) {
        _unread(@$held);
        $kept++ if $how eq 'graceful' && $self->{park}->park_until(@$held, $until);
        CORE::close($held->[0]);
    }
    $self->{log}->info("parking process $$ stopped: "
            . scalar(@held)
            . ' connection(s) held, '
            . ($kept ? "$kept put back for its successor" : 'closed'));
}

1;

__END__

=head1 NAME

Perennial::Park::Lot - the process that holds idle kept-alive connections

=head1 SYNOPSIS

    my $lot = Perennial::Park::Lot->new(park => $park, board => $board, log => $log,
        stopping => \$stopping);
    exit $lot->run;    # until $stopping is set: 'graceful' or 'now'

=head1 DESCRIPTION

Runs in a process of its own, forked by the manager. Connections that workers park
(L<Perennial::Park>) wait in one epoll; an idle one that becomes readable is handed on to the
workers at once (a client that closed is closed here), one idle past the time its worker gave
it (C<KeepAliveTimeout>) is closed. A connection whose head came in part is read here until
the head is whole (or 60,000 bytes long, or ended by the client), then handed on with its
bytes; one past C<RequestReadTimeout>'s header limit, or silent for C<Timeout>, is handed on
marked, for a worker to answer 408 and log, so a client that trickles its head (slowloris)
never holds a worker. When every worker is busy and the ready channel is full, ready
connections wait here in the order they became ready. The number of connections it holds is on
the scoreboard (L<Perennial::Scoreboard/parked>), for the status pages.

=cut
