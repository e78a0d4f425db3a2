package Perennial::Park;
use v5.36;
use Errno      qw(EAGAIN EINTR);
use IO::Handle ();
use POSIX      ();
use Socket     qw(AF_UNIX PF_UNSPEC SOCK_SEQPACKET SOL_SOCKET SCM_RIGHTS MSG_CTRUNC MSG_DONTWAIT);
use Perennial::HTTP::Core ();
use Socket::MsgHdr        ();

# Where a connection waits when no worker needs to hold it: an idle kept-alive connection goes
# from its worker to the parking process (Perennial::Park::Lot), and comes back to whichever
# worker is free when its next request arrives. Two channels carry connections, each a
# SOCK_SEQPACKET socket pair that the manager makes before it forks and keeps open for the
# server's life, so that a connection on its way survives the death of the process at either end:
#   parked  workers -> the parking process: a connection with nothing to read for now
#   ready   the parking process -> workers: one with bytes to read; its receiving end is in
#           each worker's epoll beside the listeners, and one worker takes each message
# A message is one connection: its descriptor (SCM_RIGHTS) and its state, packed.

# The listener it came on, the requests served on it, the time it is given up at (as the
# parking process counts KeepAliveTimeout, or RequestReadTimeout for a head), what it waits for
# (kind: K its next request, H the rest of a head that began at `started`, under the head's
# limits first, max and rate and the longest silence, quiet (Timeout), X a head past its time,
# T one silent past Timeout), and the bytes read of its next request
# The rest of a response that a slow reader has still to take (kind W) comes as a second
# descriptor, a file (the state's `file`), of which `left` bytes from where it stands are to go;
# then the connection waits for its next request for `idle` seconds (KeepAliveTimeout), or closes
# when that is 0
my $STATE     = 'n N d d a1 N N N d d d a*';
my @FIELDS    = qw(listener served until started kind first max rate quiet left idle buffer);
my $ROOM      = 65_536 + 64;  # The largest message: a read's worth of bytes, and the state
my $HEAD_ROOM = 60_000;       # The longest part of a head that travels (a worker reads on a longer)
my %LATE      = (X => 'RequestReadTimeout', T => 'Timeout');    # A head's time ran out: which

# The longest part of a head a message carries
sub head_room ($) {$HEAD_ROOM}

# For a head whose time ran out in the parking process (kind X or T), the limit it ran past
sub late_limit ($, $kind) { $LATE{$kind} }

# New channels; or, with $inherited ("fd,fd,fd,fd" from handles()), those of the manager a
# hot upgrade replaces, with the connections on their way in them
sub new ($class, $inherited = undef) {
    my @fds = $inherited ? split(/,/, $inherited) : ();
    my %pair;
    for my $name (qw(parked ready)) {
        my ($in, $out);
        if (@fds) {
            $_ = IO::Handle->new_from_fd(shift @fds, 'r+')
                // die "Can't adopt the parking channel: $!\n"
                for $in, $out;
        }
        else {
            socketpair($in, $out, AF_UNIX, SOCK_SEQPACKET, PF_UNSPEC)
                or die "Can't make the parking channel: $!\n";
        }
        $_->blocking(0) for $in, $out;
        $pair{$name} = [$in, $out];    # [receiving end, sending end]
    }
    return bless \%pair, $class;
}

# Every end, for a hot upgrade to hand on (Perennial::Upgrade)
sub handles ($self) { return (@{$self->{parked}}, @{$self->{ready}}) }

# The end the workers wait on, in their epoll
sub ready_handle ($self) { $self->{ready}[0] }

# The end the parking process waits on
sub parked_handle ($self) { $self->{parked}[0] }

# A worker gives a connection up: true when it went (the caller closes its own descriptor),
# false when the channel is full or broken (the worker keeps the connection itself)
sub park ($self, $sock, $state) { _send($self->{parked}[1], $sock, $state) }

# The same, waiting until $until for room in the channel (a parking process that stops puts
# back what it holds for its successor, which reads as it writes)
sub park_until ($self, $sock, $state, $until) {
    my $channel = $self->{parked}[1];
    while (1) {
        return 1 if _send($channel, $sock, $state);
        return 0 if $! != EAGAIN || !Perennial::HTTP::Core::ready($channel, $until, 1);
    }
}

# The parking process hands a connection on to the workers: true when it went
sub hand_on ($self, $sock, $state) { _send($self->{ready}[1], $sock, $state) }

# A worker takes a connection that is ready: (handle, state), or () when another worker took
# it first
sub take ($self) { _receive($self->{ready}[0]) }

# The parking process takes a connection given up: (handle, state), or () when none waits
sub collect ($self) { _receive($self->{parked}[0]) }

sub _send ($channel, $sock, $state) {
    my %s = (
        served  => 0,
        until   => 0,
        started => 0,
        kind    => 'K',
        first   => 0,
        max     => 0,
        rate    => 0,
        quiet   => 0,
        left    => 0,
        idle    => 0,
        buffer  => '',
        %$state
    );
    my $msg = Socket::MsgHdr->new(buf => pack($STATE, @s{@FIELDS}));
    $msg->cmsghdr(SOL_SOCKET, SCM_RIGHTS,
        pack('i*', fileno $sock, defined $s{file} ? fileno $s{file} : ()));
    while (1) {
        return 1 if defined Socket::MsgHdr::sendmsg($channel, $msg, MSG_DONTWAIT);
        return 0 if $! != EINTR;
    }
}

sub _receive ($channel) {
    my $msg = Socket::MsgHdr->new(buflen => $ROOM, controllen => 64);
    while (1) {
        last      if defined Socket::MsgHdr::recvmsg($channel, $msg, MSG_DONTWAIT);
        return () if $! != EINTR;
    }
    my (undef, undef, $fds) = $msg->cmsghdr;

    # Out of descriptors, the kernel closes what it could not give: that connection is lost
    die "a connection was lost: no descriptor left for it (the open files limit)\n"
        if $msg->flags & MSG_CTRUNC;
    return () unless defined $fds && length $fds >= 4;
    my ($fd, $file_fd) = unpack 'i*', $fds;
    my $sock = _handle($fd, '+<&=') or do { POSIX::close($file_fd) if defined $file_fd; return () };
    my %state;
    @state{@FIELDS} = unpack $STATE, $msg->buf;
    $state{file}    = _handle($file_fd, '<&=') if defined $file_fd;
    return ($sock, \%state);
}

# A descriptor received as a handle. (perl marks it close-on-exec as it opens it, as any
# descriptor above $^F: a CGI child does not inherit a client's connection)
sub _handle ($fd, $mode) {
    open(my $fh, $mode, $fd) or do { POSIX::close($fd); return };
    binmode $fh;
    return $fh;
}

1;

__END__

=head1 NAME

Perennial::Park - the channels that carry idle connections between workers and the parking
process

=head1 SYNOPSIS

    my $park = Perennial::Park->new;                      # in the manager, before forking
    $park->park($sock, {listener => 0, served => 3, until => $t, buffer => ''})
        and close $sock;                                  # a worker gives it up
    my ($sock, $state) = $park->collect;                  # the parking process takes it
    $park->hand_on($sock, $state);                        # its next request is on its way
    my ($sock, $state) = $park->take;                     # a free worker serves it

=head1 DESCRIPTION

Two C<SOCK_SEQPACKET> socket pairs carry connections, each message one descriptor
(C<SCM_RIGHTS>, through L<Socket::MsgHdr>) with its state: the index of the listener it came
on, the requests served on it so far (for C<MaxKeepAliveRequests>), the time the parking
process gives it up (C<KeepAliveTimeout>), what it waits for (C<K>, its next request; C<H>, the
rest of a head, with the time the head began, its C<RequestReadTimeout> limits and C<Timeout>;
C<X> and C<T>, a head past the first or silent past the second, for a worker to answer 408),
and the bytes read of its next request (at most 64 KiB; a head's part at most C<head_room>,
60,000 bytes; C<late_limit> names the limit a head of kind C<X> or C<T> ran past). Every end is
non-blocking: a full channel makes C<park> false, and the worker keeps its connection as it
would without parking. The manager holds every end for the server's life, so a message in
flight outlives the process that sent it and the one that was to read it.

=cut
