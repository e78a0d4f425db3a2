package Perennial::Notify;
use v5.36;
use Socket qw(AF_UNIX SOCK_DGRAM pack_sockaddr_un);

# systemd's readiness protocol (sd_notify(3)), spoken over its socket directly: a datagram of
# "NAME=value" lines to the path in NOTIFY_SOCKET (an abstract socket when it starts with @).
# Type=notify services say READY=1 once they serve, RELOADING=1 and READY=1 around a reload,
# STOPPING=1 as they stop; a hot upgrade's new manager says MAINPID= with its READY=1. Without
# NOTIFY_SOCKET (not started by systemd, or not as Type=notify) nothing is sent.

# One that sends to $args{path} (NOTIFY_SOCKET, which the command line takes out of the
# environment so that scripts and their children do not speak for the server; a hot upgrade
# hands it on: socket_path), or to no one
sub new ($class, %args) { bless {path => $args{path}}, $class }

sub socket_path ($self) { $self->{path} }

# What the manager's events mean to systemd
my %SAY = (
    ready     => 'READY=1',
    reloading => 'RELOADING=1',
    stopping  => 'STOPPING=1',
);

# An event of the manager (ready, reloading, stopping), with a status line; a failure to send is
# logged by the caller, never fatal
sub event ($self, $event, $status = undef) {
    my $say   = $SAY{$event} // die "no such event: $event\n";
    my @lines = ($event eq 'ready' ? "MAINPID=$$" : (), $say);
    push @lines, "STATUS=$status" if defined $status;
    return $self->send(join "\n", @lines);
}

# Sends a message; true when there is no one to send it to or it went, false with $! otherwise
sub send ($self, $message) {
    my $path = $self->{path};
    return 1 unless defined $path && length $path;
    $path =~ s/\A@/\0/;    # An abstract socket
    socket(my $sock, AF_UNIX, SOCK_DGRAM, 0) or return 0;
    my $sent = send($sock, $message, 0, pack_sockaddr_un($path));
    return defined $sent && $sent == length $message;
}

1;

__END__

=head1 NAME

Perennial::Notify - tell systemd that the server is ready, reloading or stopping

=head1 SYNOPSIS

    my $notify = Perennial::Notify->new(path => delete $ENV{NOTIFY_SOCKET});
    $notify->event(ready => '4 workers') or $log->warn("systemd not told: $!");
    $notify->event('reloading');
    $notify->event('stopping');

=head1 DESCRIPTION

The C<sd_notify> protocol, written to C<NOTIFY_SOCKET> without libsystemd: C<READY=1> (with
C<MAINPID=>, so that the manager a hot upgrade starts becomes the service's main process),
C<RELOADING=1>, C<STOPPING=1> and C<STATUS=>. With a C<Type=notify> unit (the one in
C<debian/perennial.service>), C<systemctl start> returns once the first workers serve, and
C<systemctl reload> once the new configuration is in use. C<NotifyAccess=all> lets the upgraded
manager speak.

=cut
