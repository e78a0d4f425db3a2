package Perennial::Upgrade;
use v5.36;
use Fcntl qw(F_GETFD F_SETFD FD_CLOEXEC);
use POSIX ();
use Perennial::ServerEnv;

# Hot upgrade, as Hypnotoad's USR2 and Server::Starter do it: the manager starts a new perennial
# with the same command line and hands it the listening sockets as inherited descriptors, so
# no connection is ever refused. The new manager loads everything afresh (new Perl code, new
# configuration), starts its workers, and when they are ready asks the old manager to stop
# gracefully; the old workers finish their requests. If the new one fails, the old one serves on.

# Starts the new manager; returns its pid, or undef when it could not be started
sub start ($class, %args) {
    my ($log, $listeners, $command, $park) = @args{qw(log listeners command park)};
    my @fh   = map { $_->fh } @$listeners;
    my @park = $park ? $park->handles : ();
    _cloexec($_, 0) for @fh, @park;
    my $pid = fork;
    if (defined $pid && !$pid) {

        # The environment this server was started with, not the clean one its code runs in
        # (Perennial::ServerEnv): the new one reads its configuration's ${NAME} from it. What an
        # upgrade handed this one is not the new one's.
        my %started = %{Perennial::ServerEnv::started()};
        delete @started{
            qw(PERENNIAL_LISTEN_FDS PERENNIAL_PARK_FDS PERENNIAL_UPGRADE_FROM NOTIFY_SOCKET)};
        %ENV = (    ## no critic (RequireLocalizedPunctuationVars) for the exec
            %started,
            PERENNIAL_LISTEN_FDS   => join(',', map { fileno $_ } @fh),
            PERENNIAL_UPGRADE_FROM => getppid,
            (@park ? (PERENNIAL_PARK_FDS => join ',', map { fileno $_ } @park) : ()),
            (defined $args{notify} ? (NOTIFY_SOCKET => $args{notify})          : ())
        );
        exec {$command->[0]} @$command or POSIX::_exit(127);
    }
    my $err = $!;
    _cloexec($_, 1) for @fh, @park;
    if (!defined $pid) { $log->error("Can't start the new manager: $err"); return }
    $log->info("upgrade: new manager $pid started (@$command[2 .. $#$command])");
    return $pid;
}

sub _cloexec ($fh, $on) {
    my $flags = fcntl($fh, F_GETFD, 0) or return;
    fcntl($fh, F_SETFD, $on ? $flags | FD_CLOEXEC : $flags & ~FD_CLOEXEC);
}

1;

__END__

=head1 NAME

Perennial::Upgrade - start a new manager that takes over the listening sockets

=head1 SYNOPSIS

    my $pid = Perennial::Upgrade->start(log => $log, listeners => \@listeners,
        command => [$^X, '-Ilib', 'bin/perennial', 'serve', '-c', 'perennial.conf']);

=head1 DESCRIPTION

Clears close-on-exec on the listening sockets, forks, and runs the command with
C<PERENNIAL_LISTEN_FDS> (the descriptors, comma-separated) and C<PERENNIAL_UPGRADE_FROM> (the
old manager's pid) in its environment, and C<PERENNIAL_PARK_FDS> (the four ends of the
parking channels, L<Perennial::Park>) when idle connections are parked: the new manager's
parking process takes over the connections the old one held. L<Perennial::CLI> reads them: the new manager adopts
those sockets instead of binding its C<Listen> addresses, takes over the pid file, and sends
QUIT to the old manager once its own StartServers workers are waiting for requests.

=head1 METHODS

=head2 start

    my $pid = Perennial::Upgrade->start(log => $log, listeners => \@listeners, command => \@argv,
        park => $park);

=cut
