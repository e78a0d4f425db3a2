package Perennial::Listener;
use v5.36;
use Fcntl            qw(F_GETFD F_SETFD FD_CLOEXEC);
use IO::Socket::IP   ();
use IO::Socket::UNIX ();
use Socket
    qw(IPPROTO_TCP SOL_SOCKET SO_RCVTIMEO SO_SNDTIMEO SOMAXCONN TCP_DEFER_ACCEPT TCP_NODELAY);

# One listening socket: a TCP address, a Unix socket path, or a descriptor handed over by
# whoever started us (fd:N). Bound once in the manager; workers inherit it.

sub new ($class, %args) {
    my $self = bless {spec => $args{spec}, backlog => $args{backlog} // SOMAXCONN}, $class;
    my $spec = $self->{spec};
    if    ($spec =~ /\Afd:(\d+)\z/) { $self->_adopt($1) }
    elsif ($spec =~ m{/})           { $self->_bind_unix($spec) }
    else                            { $self->_bind_tcp($spec) }
    return $self;
}

sub close ($self) {
    CORE::close($self->{fh})  if $self->{fh};
    unlink $self->{unix_path} if $self->{unix_path} && $self->{owner} == $$ && !$self->{lent};
    delete $self->{fh};
}

# While a new manager takes the socket over (hot upgrade), closing it must not remove its path
sub disown ($self, $lent) { $self->{lent} = $lent }

sub fh ($self) { $self->{fh} }

sub name ($self) {
    return $self->{unix_path} if $self->{unix_path};
    my ($host, $port) = ($self->host, $self->port);
    return $host =~ /:/ ? "[$host]:$port" : "$host:$port";
}

sub is_unix ($self) { !defined $self->port }

sub host ($self) { $self->{unix_path} ? undef : $self->{fh}->sockhost }

sub port ($self) { $self->{unix_path} ? undef : $self->{fh}->sockport }

# TCP connections inherit the listener's timeouts on Linux; Unix-socket ones do not and get
# them here, two system calls per connection
sub prepare ($self, $client) {
    return unless $self->{unix_path};
    _timeouts($client, $self->{timeout});
}

sub set_timeout ($self, $seconds) {
    $self->{timeout} = $seconds;

    # On the listener they also end a blocking accept() after a signal, even with SA_RESTART
    _timeouts($self->{fh}, $seconds);
    return $self;
}

sub _adopt ($self, $fd) {
    my $fh = IO::Socket::IP->new_from_fd($fd, 'r') or die "Can't use descriptor $fd: $!\n";
    $fh->sockdomain or die "Can't use descriptor $fd: not a socket\n";
    if ($fh->sockdomain == Socket::AF_UNIX) {
        $fh = IO::Socket::UNIX->new_from_fd($fd, 'r') or die "Can't use descriptor $fd: $!\n";
        $self->{unix_path} = $fh->hostpath;
        $self->{owner}     = 0;
    }
    my $flags = fcntl($fh, F_GETFD, 0)       or die "Can't read flags of descriptor $fd: $!\n";
    fcntl($fh, F_SETFD, $flags | FD_CLOEXEC) or die "Can't set flags of descriptor $fd: $!\n";
    $self->{fh} = $fh;
    $self->_tcp_options unless $self->{unix_path};
}

sub _bind_tcp ($self, $spec) {
    my ($host, $port) = $spec =~ /\A(?:\[([^\]]+)\]|([^:]*)):(\d+)\z/ ? ($1 // $2, $3) : ();
    ($host, $port) = ('', $spec) if !defined $port && $spec =~ /\A\d+\z/;
    die "Can't listen on '$spec': expected HOST:PORT, :PORT, [IPv6]:PORT or a socket path\n"
        unless defined $port;
    my $fh = IO::Socket::IP->new(
        LocalHost => (length $host ? $host : '0.0.0.0'),
        LocalPort => $port,
        Listen    => $self->{backlog},
        ReuseAddr => 1,
    ) or die "Can't listen on $spec: $@\n";
    $self->{fh} = $fh;
    $self->_tcp_options;
}

sub _bind_unix ($self, $path) {
    if (-S $path) {
        my $probe = IO::Socket::UNIX->new(Peer => $path);
        die "Can't listen on $path: another server is using it\n" if $probe;
        unlink $path or die "Can't remove stale socket $path: $!\n";
    }
    my $fh = IO::Socket::UNIX->new(Local => $path, Listen => $self->{backlog})
        or die "Can't listen on $path: $@\n";
    @$self{qw(fh unix_path owner)} = ($fh, $path, $$);
}

sub _timeouts ($fh, $seconds) {
    my $tv = pack 'l!l!', int($seconds), ($seconds - int $seconds) * 1e6;
    setsockopt($fh, SOL_SOCKET, SO_RCVTIMEO, $tv) or die "Can't set receive timeout: $!\n";
    setsockopt($fh, SOL_SOCKET, SO_SNDTIMEO, $tv) or die "Can't set send timeout: $!\n";
}

sub _tcp_options ($self) {
    setsockopt($self->{fh}, IPPROTO_TCP, TCP_NODELAY, 1) or die "Can't set TCP_NODELAY: $!\n";

    # As Apache's AcceptFilter http data: accept() returns once the request has arrived, so a
    # worker is not woken to wait for it (one sleep and wake less per request), and clients
    # that connect and send nothing wait in the kernel instead of holding a worker. Apache's 30
    # seconds: with 1, a full listen queue made the kernel reset connections whose request
    # had already arrived (254 to 388 of 2,000 clients on 256 workers; none with 30)
    setsockopt($self->{fh}, IPPROTO_TCP, TCP_DEFER_ACCEPT, 30)
        or die "Can't set TCP_DEFER_ACCEPT: $!\n";
}

1;

__END__

=head1 NAME

Perennial::Listener - one listening socket, TCP or Unix

=head1 SYNOPSIS

    my $listener = Perennial::Listener->new(spec => '127.0.0.1:8529', backlog => 511);
    $listener->set_timeout(60);
    say $listener->name;

=head1 DESCRIPTION

Binds C<HOST:PORT>, C<:PORT>, C<[IPv6]:PORT> or a Unix socket path, or adopts an inherited
descriptor given as C<fd:N>. Options that accepted sockets inherit (C<TCP_NODELAY>, the
receive and send timeouts) are set here once, so the request path does not set them again.

=head1 METHODS

=head2 disown

    $listener->disown(1);

While true, C<close> leaves a Unix socket's path in place: a new manager has the socket.

=head2 close

    $listener->close;

Closes the socket and removes a Unix socket file that this process created.

=head2 fh

    accept(my $client, $listener->fh);

The socket handle.

=head2 name

    say $listener->name;    # 127.0.0.1:8529

The bound address, with the real port when port 0 was asked for.

=head2 host

    my $ip = $listener->host;    # 127.0.0.1, or ::1 (no brackets)

The bound TCP address, or undef for a Unix socket.

=head2 port

    my $port = $listener->port;

The bound TCP port, or undef for a Unix socket.

=head2 is_unix

Whether it is a Unix socket (it has no port).

=head2 prepare

    $listener->prepare($client);

Gives a just-accepted connection what it did not inherit (the timeouts, for Unix sockets).

=head2 set_timeout

    $listener->set_timeout(60);

Sets the I/O timeout that accepted connections inherit.

=cut
