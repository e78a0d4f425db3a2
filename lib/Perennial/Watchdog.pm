package Perennial::Watchdog;
use v5.36;
use File::Basename qw(dirname);
use POSIX          ();
use Scalar::Util   ();
use Time::HiRes    ();

# Request deadlines and the slow-request log. A worker writes the time limits of the location
# it is serving into its scoreboard slot (arm); the manager looks at the slots several times a
# second (watch) and signals a worker whose request has run too long: PROF asks for a stack
# sample, XCPU stops the worker after it wrote its stack and answered the client, and KILL
# follows when the worker does not stop (it is stuck outside Perl code).

my ($STOP_GRACE, $DEPTH) = (2, 30);

# The system calls that wait, which a signal ends early, by their numbers on the machines Debian
# runs Perennial on (asm/unistd.h)
my %WAIT_CALLS = (
    x86_64 => {
        35  => 'nanosleep',
        230 => 'clock_nanosleep',
        23  => 'select',
        270 => 'pselect6',
        7   => 'poll',
        271 => 'ppoll',
        232 => 'epoll_wait',
        281 => 'epoll_pwait',
        34  => 'pause',
        130 => 'rt_sigsuspend',
        128 => 'rt_sigtimedwait'
    },
    aarch64 => {
        101 => 'nanosleep',
        115 => 'clock_nanosleep',
        72  => 'pselect6',
        73  => 'ppoll',
        22  => 'epoll_pwait',
        133 => 'rt_sigsuspend',
        137 => 'rt_sigtimedwait'
    },
);
my $WAITS = $WAIT_CALLS{(POSIX::uname())[4]};    # This machine's; none known elsewhere

# The limits of the location a request is in, in the worker's slot: [deadline, slow]. Through
# the request, whose worker has a watchdog (an application run outside a worker has none).
sub arm_for ($env, $limits) {
    my $watchdog = $env->{'perennial.watchdog'} or return;
    $watchdog->{board}->arm($watchdog->{slot}, @$limits);
    return;
}

# The request's deadline taken off its slot for work after its response that ends by the same
# deadline itself (a CGI script's reap): when the deadline falls (epoch seconds), or undef when
# none is armed. The slow-request limit stays. Until rearm, a second call for the same request
# (a second script's reap) says the same.
sub disarm ($env) {
    my $watchdog = $env->{'perennial.watchdog'} or return;
    my $kept     = $env->{'perennial.disarmed'} //= _disarm(@$watchdog{qw(board slot)});
    return $kept->[0];
}

# [when the deadline falls, the limits to arm again] or [undef] when none was armed
sub _disarm ($board, $slot) {
    my $s = $board->slot($slot);
    return [undef]
        unless $s->{deadline} && $s->{armed_for} && $s->{armed_for} == $s->{request_started};
    $board->arm($slot, 0, $s->{slow});
    return [$s->{request_started} + $s->{deadline}, $s->{deadline}, $s->{slow}];
}

# The deadline disarm took off, back on the slot while it is still ahead, so that what runs after
# (other cleanups) counts against it again. (Past it, the work that kept it has ended its script
# at it; arming it then would have the manager stop a worker that is about to go on.)
sub rearm ($env) {
    my $kept = $env->{'perennial.disarmed'} or return;
    my ($at, @limits) = @$kept;
    return if !defined $at || $at <= Time::HiRes::time();
    my $watchdog = $env->{'perennial.watchdog'};
    $watchdog->{board}->arm($watchdog->{slot}, @limits);    # The same request: the same start
    delete $env->{'perennial.disarmed'};
    return;
}

# The manager's side: signal the workers whose request passed a limit
sub watch ($class, $board, $workers, $log) {
    my $now = Time::HiRes::time();
    for my $w (values %$workers) {
        if (my $at = $w->{kill_at}) {
            next if $now < $at;
            $log->error("worker $w->{pid} did not stop $STOP_GRACE s after its request deadline "
                    . '(stuck outside Perl code, so no stack): killing it');
            kill 'KILL', $w->{pid};
            $w->{kill_at} = $now + 3600;
            next;
        }
        next if $board->state_of($w->{slot}) ne 'W';    # Only busy slots are read whole
        my $s = $board->slot($w->{slot});
        next unless $s->{armed_for} && $s->{armed_for} == $s->{request_started};
        my $age = $now - $s->{request_started};
        if ($s->{deadline} && $age >= $s->{deadline}) {
            $log->error(
                "worker $w->{pid} passed the request deadline ($s->{deadline} s) serving '$s->{request}' "
                    . "for $s->{client}: stopping it");
            kill 'XCPU', $w->{pid};
            $w->{kill_at} = $now + $STOP_GRACE;
        }
        elsif ($s->{slow} && $age >= $s->{slow} && ($w->{sampled} // 0) != $s->{request_started}) {
            next if _waiting($w, $s, $age, $log);
            $w->{sampled} = $s->{request_started};
            kill 'PROF', $w->{pid};
        }
    }
}

# A diagnostic never changes a program: a signal ends a sleep, a select or a poll early whatever
# its handler says (signal(7)), so while the worker waits in one its stack is not sampled. It is
# once the worker runs again; the log says once that it is waiting. True while it waits.
sub _waiting ($w, $s, $age, $log) {
    my $call = _wait_call($w->{pid}) or return 0;
    return 1 if ($w->{noted} // 0) == $s->{request_started};
    $w->{noted} = $s->{request_started};
    $log->warn(
        sprintf "slow request (SlowRequestTime %s s): '%s' for %s running %.1f s, waiting in "
            . '%s: its stack is sampled when it runs again, since a signal would end the wait early',
        $s->{slow}, $s->{request}, $s->{client}, $age, $call);
    return 1;
}

# The name of the waiting system call the process is in (its /proc/PID/syscall), if it is one
sub _wait_call ($pid) {
    $WAITS                                    or return;
    open(my $fh, '<', "/proc/$pid/syscall")   or return;
    my ($number) = (<$fh> // '') =~ /\A(\d+)/ or return;    # "running": in its own code
    return $WAITS->{$number};
}

# The manager's side, made once for all its workers (made in each, it copied pages they share
# with the manager): the watchdog and its handlers, closed over it (board, log, and the slot and
# connection loop each worker gives it as it installs them). The handlers hold it weakly: what
# installs it keeps it.
sub new ($class, %args) {
    my $self = bless {%args{qw(board log)}}, $class;
    Scalar::Util::weaken(my $weak = $self);
    $self->{on_deadline} = sub ($signal) { $weak->_deadline };

    # SA_RESTART: a stack sample should not cut the application's reads short
    $self->{on_sample} = POSIX::SigAction->new(sub ($signal) { $weak->_sample },
        POSIX::SigSet->new, POSIX::SA_RESTART());
    $self->{on_sample}->safe(1);
    return $self;
}

# The worker's side: its signal handlers for the rest of its life, for its slot and connection
# loop; returns the watchdog, which the caller keeps (the handlers hold it weakly)
sub install ($self, %args) {
    die "Perennial::Watchdog->install: make the watchdog with new first\n" unless ref $self;
    @$self{qw(slot connection)} = @args{qw(slot connection)};
    $SIG{XCPU} = $self->{on_deadline};    ## no critic (RequireLocalizedPunctuationVars)
    POSIX::sigaction(POSIX::SIGPROF(), $self->{on_sample})
        or die "Can't install the PROF handler: $!\n";
    return $self;
}

# Where the application was when the signal came, innermost first, "FILE line N (in SUB)",
# down to where Perennial called it
sub stack () {
    my ($own, @frames, @at) = (dirname(__FILE__) . '/');
    for (my $i = 1; my @f = caller $i; $i++) { push @frames, [@f[1, 2, 3]] }

    # The handler's own frames first (the closure that called it), then the interrupted code
    shift @frames while @frames && $frames[0][0] eq __FILE__;
    for my $k (0 .. $#frames) {
        my ($file, $line) = @{$frames[$k]};
        last if index($file, $own) == 0 || @at >= $DEPTH;

        # The sub this line is in: the next frame up that is not an eval (perl calls signal
        # handlers inside one)
        my ($in) = grep { $_ ne '(eval)' } map { $_->[2] } @frames[$k + 1 .. $#frames];
        my $where = "$file line $line";
        next if @at && index($at[-1], $where) == 0;
        push @at, "$where (in " . ($in // 'main') . ')';
    }
    return @at ? join(' <- ', @at) : 'Perennial itself (between requests)';
}

sub _deadline ($self) {
    my $s = $self->{board}->slot($self->{slot});
    $self->{log}->error(sprintf "request deadline (%s s) passed: '%s' for %s stopped at %s",
        $s->{deadline}, $s->{request}, $s->{client}, stack());

    # Answered (504, or the connection closed after a response begun), or past its response (in
    # a cleanup handler): the slot no longer shows a request in hand, so the manager does not
    # report it lost
    my $conn = $self->{connection};
    $self->{board}->state($self->{slot}, 'C') if $conn->abort_request(504) || !$conn->client_socket;
    POSIX::_exit(1);
}

sub _sample ($self) {
    my $s = $self->{board}->slot($self->{slot});
    $self->{log}
        ->warn(sprintf "slow request (SlowRequestTime %s s): '%s' for %s running %.1f s, at %s",
        $s->{slow}, $s->{request}, $s->{client}, Time::HiRes::time() - $s->{request_started},
        stack());
}

1;

__END__

=head1 NAME

Perennial::Watchdog - request deadlines and the slow-request log

=head1 SYNOPSIS

    # In the manager, once for all the workers it forks
    my $watchdog = Perennial::Watchdog->new(board => $board, log => $log);
    # In a worker, once; the request carries it as $env->{'perennial.watchdog'}
    $watchdog->install(slot => $slot, connection => $conn);
    # Per request, by the location's application
    Perennial::Watchdog::arm_for($env, [30, 5]);
    # In the manager, several times a second
    Perennial::Watchdog->watch($board, \%workers, $log);

=head1 DESCRIPTION

C<RequestDeadline> and C<SlowRequestTime> (server-wide or per C<< <Location> >>, in seconds, 0
for none) are checked by the manager against each busy worker's scoreboard slot, so the worker
spends no system call on them. When a request runs past C<SlowRequestTime>, the worker gets PROF
and writes the Perl stack of the request to the error log (once per request; the request goes
on). A signal would end a C<sleep>, C<select> or C<poll> early, so while the worker waits in one
(the manager reads F</proc/PID/syscall>) it is not sent: the log says once that the request is
waiting, and the sample comes when it runs again. When it runs past C<RequestDeadline>, the
worker gets XCPU: it writes the stack, answers C<504 Gateway Timeout> if the response has not
started (else the connection is closed), logs the access line and exits; the manager starts a
new worker. A worker stuck outside Perl code (an XS call that restarts on signals, a regular
expression that backtracks for ever) does not run its handler, so after 2 seconds more it gets
KILL and the client sees the connection close.

=head1 SIGNALS

Workers: XCPU (deadline passed: stack, 504, exit), PROF (slow: stack sample, go on).

=head1 EVENTS

C<worker N passed the request deadline (S s) serving 'REQUEST' for CLIENT: stopping it> (manager,
error), C<request deadline (S s) passed: 'REQUEST' for CLIENT stopped at FILE line N (in SUB)
E<lt>- ...> (worker, error), C<slow request (SlowRequestTime S s): 'REQUEST' for CLIENT running
T s, at FILE line N ...> (worker, warn), C<worker N did not stop 2 s after its request deadline
... killing it> (manager, error).

=head1 FUNCTIONS

=head2 arm_for

    Perennial::Watchdog::arm_for($env, [$deadline, $slow]);

Sets the limits of the request now running, in its worker's slot; nothing when the request
came by no worker (C<perennial.watchdog> is not in it).

=head2 disarm

    my $deadline_at = Perennial::Watchdog::disarm($env);    # epoch seconds, or undef

Takes the request's deadline off its worker's slot (the slow-request limit stays) and says when
it falls, for work after the response that ends by that deadline itself: a CGI script's
process, ended at the deadline instead of the worker. A second call for the same request, before
C<rearm>, says the same.

=head2 rearm

    Perennial::Watchdog::rearm($env);

Puts back the deadline C<disarm> took off, when it is still ahead.

=head2 stack

    my $where = Perennial::Watchdog::stack();

The caller frames of the code a signal handler interrupted, innermost first.

=head1 METHODS

=head2 new

    my $watchdog = Perennial::Watchdog->new(board => $board, log => $log);    # In the manager

The watchdog, with its XCPU and PROF handlers made (not installed), for every worker the
manager forks: made once, they are shared with the workers instead of copied into each.

=head2 install

    $watchdog->install(slot => $slot, connection => $conn);    # In a worker

Installs the worker's XCPU and PROF handlers, closed over the watchdog: its scoreboard slot,
its log and the connection loop (L<Perennial::Connection>) whose request a deadline answers.
The handlers hold the watchdog weakly: the worker keeps what C<install> returns (the request
carries it).

=head2 watch

    Perennial::Watchdog->watch($board, $workers, $log);

C<$workers> maps pids to C<< {pid, slot} >>; the method keeps its own notes in those hashes.

=cut
