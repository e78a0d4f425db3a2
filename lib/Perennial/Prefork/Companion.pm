package Perennial::Prefork::Companion;
use v5.36;
use POSIX                    ();
use Time::HiRes              ();
use Perennial::Prefork::Fork qw(fork_guarded);

# A process the manager keeps beside its workers for the server's whole life (the parking
# process): started with the pool, started again when it dies (at most once a second, so one
# that cannot start does not make the manager spin), kept across restarts (it holds no
# configuration), and stopped with the server: QUIT for a graceful stop, TERM for a stop.

my $KILL_AFTER = 10;

# name, for the log; run, its life: a code reference given a reference to its stop flag, set
# to 'graceful' (QUIT) or 'now' (TERM), and returning its exit code; log; signals, the
# manager's signals (name => number), which it must not keep; on_exit, what the manager does
# when it is gone (not when it was renewed)
sub new ($class, %args) {
    return bless {%args{qw(name run log signals on_exit)}, pid => undef, due => 0}, $class;
}

# Starts it unless it runs, or when it died less than a second ago (without a run, it is
# none: every method does nothing)
sub start ($self) {
    return if !$self->{run} || $self->{pid} || Time::HiRes::time() < $self->{due};
    $self->{due} = Time::HiRes::time() + 1;
    my $stopping = '';
    my $pid = fork_guarded([values %{$self->{signals}}], sub { $self->_own_signals(\$stopping) });
    return $self->{log}->error("Can't fork the $self->{name}: $!") if !defined $pid;
    if (!$pid) {
        $0 = "perennial $self->{name}";    ## no critic (RequireLocalizedPunctuationVars)
        my $code = eval { $self->{run}->(\$stopping) } // do {
            $self->{log}->error("$self->{name} $$ failed: " . ($@ =~ s/\s+\z//r));
            1;
        };
        POSIX::_exit($code);
    }
    $self->{pid} = $pid;
    $self->{log}->info("$self->{name} $pid started");
}

# The child's handlers, for the rest of its life (so not local): QUIT and TERM set its stop
# flag, Ctrl-C in a terminal is the manager's to act on, the manager's others are undone
sub _own_signals ($self, $stopping_ref) {
    ## no critic (RequireLocalizedPunctuationVars)
    $SIG{$_}   = 'DEFAULT' for keys %{$self->{signals}};
    $SIG{INT}  = 'IGNORE';
    $SIG{QUIT} = sub { $$stopping_ref ||= 'graceful' };
    $SIG{TERM} = sub { $$stopping_ref = 'now' };
    ## use critic
    return;
}

# A new one in its place (the logs were reopened: one that gave up root cannot open them
# itself): the new one starts first, then the old one is asked to go as on a graceful stop,
# handing what it holds on to the new one
sub renew ($self) {
    my $old = $self->{pid} or return;
    undef $self->{pid};
    $self->{due} = 0;
    $self->start;
    $self->{old}{$old} = 1;
    kill 'QUIT', $old;
}

# True when $pid was it, or one it replaced (then logged, and started again unless the server
# is stopping or it was replaced)
sub reaped ($self, $pid, $how, $stopping) {
    if (delete $self->{old}{$pid}) {
        $self->{log}->info("$self->{name} $pid exited ($how), replaced");
        return 1;
    }
    return 0 unless $self->{pid} && $pid == $self->{pid};
    undef $self->{pid};
    delete $self->{insist};
    $self->{on_exit}->() if $self->{on_exit};
    $self->{log}->info("$self->{name} $pid exited ($how)");
    $self->start unless $stopping;
    return 1;
}

# Asks it to go, QUIT ('graceful') or TERM ('now'), and returns: the manager reaps it with its
# workers (reaped), and press insists meanwhile
sub stop ($self, $how) {
    my $pid = $self->{pid} or return;
    kill $how eq 'graceful' ? 'QUIT' : 'TERM', $pid;
    $self->{insist} //= [Time::HiRes::time() + $KILL_AFTER, 'TERM'];
    return;
}

# Whether it runs (asked to stop, it runs until it is reaped)
sub running ($self) { $self->{pid} ? 1 : 0 }

# One asked to stop that has not gone: TERM 10 s after, KILL 10 s after that
sub press ($self) {
    my ($at, $signal) = @{$self->{insist} // return};
    return if !$self->{pid} || Time::HiRes::time() < $at;
    $self->{log}->warn("$self->{name} $self->{pid} did not stop: $signal");
    kill $signal, $self->{pid};
    $self->{insist} = [$at + $KILL_AFTER, 'KILL'];
    return;
}

1;

__END__

=head1 NAME

Perennial::Prefork::Companion - a process the manager keeps beside its workers

=head1 SYNOPSIS

    my $companion = Perennial::Prefork::Companion->new(name => 'parking process', log => $log,
        signals => {TERM => 15, ...}, run => sub ($stopping) { ...; return 0 });
    $companion->start;                                   # again each second: starts it if gone
    $companion->reaped($pid, $how, $stopping) and next;  # from the manager's waitpid loop
    $companion->renew;                                   # a new one takes over
    $companion->stop('graceful');                        # or 'now'

=head1 DESCRIPTION

L<Perennial::Prefork> runs one of these when it is given C<companion>: the parking process of
L<Perennial::Park::Lot>. It is forked with the manager's signals blocked until its own
handlers are in place (QUIT sets its stop flag to C<graceful>, TERM to C<now>), started again
when it exits while the server runs (at most once a second), left alone by restarts, renewed
when the logs are reopened (a new one starts, then the old one gets QUIT), and stopped last
when the server stops. Log lines at info: C<NAME N started>, C<NAME N exited
(HOW)>.

=cut
