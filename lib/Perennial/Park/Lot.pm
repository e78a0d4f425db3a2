package Perennial::Park::Lot;
use v5.36;
use Errno       qw(EAGAIN EINTR);
use Socket      qw(MSG_DONTWAIT MSG_PEEK);
use Time::HiRes ();
use Linux::Epoll;

# The parking process: it holds the connections that workers gave up while they are idle, one
# epoll over all of them, and hands each on to the workers as soon as it is readable (its next
# request is arriving). One that stays idle past the time its worker gave it (KeepAliveTimeout)
# is closed, as a worker would close it; one the client closed is closed here, no worker woken.
# It holds nothing else: no application, no configuration, no request's data.

my $MAX_WAIT = 1;    # Seconds between looks at the stop flag and the board, at the most

# park: the channels (Perennial::Park); board: the scoreboard, for the count of parked
# connections; log; stopping: a reference to the flag its signal handlers set
sub new ($class, %args) {
    my $self = bless {
        park     => $args{park},
        board    => $args{board},
        log      => $args{log},
        stopping => $args{stopping},
        epoll    => Linux::Epoll->new,
        parked   => {},                  # fileno => [handle, state]
        order    => [],    # [until, fileno, handle] in the order they came: the first to expire
        waiting  => [],    # Ready, but the ready channel was full: [handle, state]
    }, $class;
    $self->{epoll}->add($self->{park}->parked_handle, 'in', sub ($events) { $self->_collect });
    return $self;
}

sub run ($self) {
    my $stopping = $self->{stopping};
    while (!$$stopping) {
        $self->{epoll}->wait(64, $self->_wait);
        $self->_expire;
        $self->_hand_on_waiting if @{$self->{waiting}};
        $self->{board}->parked(scalar keys %{$self->{parked}});
    }
    $self->_leave($$stopping);
    return 0;
}

# How long to sleep: until the first connection expires, a second at most
sub _wait ($self) {
    my $first = $self->{order}[0] or return $MAX_WAIT;
    my $wait  = $first->[0] - Time::HiRes::time();
    return $wait < 0 ? 0 : $wait > $MAX_WAIT ? $MAX_WAIT : $wait;
}

# Connections the workers gave up: each waits for its next request here, unless its bytes
# came already
sub _collect ($self) {
    while (my ($sock, $state) = $self->{park}->collect) {
        if (length $state->{buffer}) { $self->_hand_on($sock, $state); next }
        my $fd = fileno $sock;
        $self->{parked}{$fd} = [$sock, $state];
        push @{$self->{order}}, [$state->{until}, $fd, $sock];
        $self->{epoll}->add($sock, 'in', sub ($events) { $self->_readable($fd) });
    }
}

# Bytes, or the end: a request goes on to a worker, a connection the client closed is closed
sub _readable ($self, $fd) {
    my $held = delete $self->{parked}{$fd} or return;
    my ($sock, $state) = @$held;
    $self->{epoll}->delete($sock);
    my $peek = '';
    my $got  = recv($sock, $peek, 1, MSG_PEEK | MSG_DONTWAIT);
    return CORE::close($sock) if !defined $got || !length $peek;
    $self->_hand_on($sock, $state);
}

sub _hand_on ($self, $sock, $state) {
    if ($self->{park}->hand_on($sock, $state)) { CORE::close($sock); return }

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

# Those idle past their time are closed, as a worker closes a connection after KeepAliveTimeout
sub _expire ($self) {
    my ($order, $parked) = @$self{qw(order parked)};
    my $now = Time::HiRes::time();
    while (@$order && $order->[0][0] <= $now) {
        my (undef, $fd, $sock) = @{shift @$order};
        my $held = $parked->{$fd};
        next if !$held || $held->[0] != $sock;    # Gone on, or the number reused since
        delete $parked->{$fd};
        $self->{epoll}->delete($sock);
        CORE::close($sock);
    }
}

# Told to stop. A graceful stop ('graceful') puts what it holds back into the channel, where
# a successor (after a hot upgrade, a new parking process) finds it; a stop closes it all.
sub _leave ($self, $how) {
    my @held = (values(%{$self->{parked}}), @{$self->{waiting}});
    my $kept = 0;
    for my $held (@held) {
        $kept++ if $how eq 'graceful' && $self->{park}->park(@$held);
        CORE::close($held->[0]);
    }
    $self->{board}->parked(0);
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
(L<Perennial::Park>) wait in one epoll; one that becomes readable is handed on to the workers
at once (a client that closed is closed here), one idle past the time its worker gave it
(C<KeepAliveTimeout>) is closed. When every worker is busy and the ready channel is full, ready
connections wait here in the order they became ready. The number of connections it holds is on
the scoreboard (L<Perennial::Scoreboard/parked>), for the status pages.

=cut
