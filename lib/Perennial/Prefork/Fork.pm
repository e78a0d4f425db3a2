package Perennial::Prefork::Fork;
use v5.36;
use Exporter qw(import);
use POSIX    ();

# A child of the manager (a worker, the parking process) is forked with the manager's signals
# blocked until it has handlers of its own: a TERM that reached it while it still had the
# manager's would only set a flag in the manager's copy, and be lost.

our @EXPORT_OK = qw(fork_guarded);

# Forks with the signals @$signals (numbers) blocked; in the child, $own_handlers runs before
# they are unblocked. The child's pid in the manager, 0 in the child, undef when fork failed
# ($! says why).
sub fork_guarded ($signals, $own_handlers) {
    my $mask = POSIX::SigSet->new(@$signals);
    my $old  = POSIX::SigSet->new;
    POSIX::sigprocmask(POSIX::SIG_BLOCK(), $mask, $old);
    my $pid = fork;
    my $err = $!;
    $own_handlers->() if defined $pid && !$pid;
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), $old);
    $! = $err;    ## no critic (RequireLocalizedPunctuationVars)
    return $pid;
}

1;

__END__

=head1 NAME

Perennial::Prefork::Fork - fork a child of the manager without losing a signal meant for it

=head1 SYNOPSIS

    my $pid = fork_guarded([values %signals], sub { $SIG{TERM} = sub { $stop = 1 } });
    die "Can't fork: $!" unless defined $pid;
    if (!$pid) { ...; POSIX::_exit(0) }

=head1 DESCRIPTION

C<fork_guarded> blocks the given signals around C<fork>, lets the child set its own handlers,
then unblocks them on both sides: a signal sent to the child in between waits for its own
handler instead of running the manager's.

=cut
