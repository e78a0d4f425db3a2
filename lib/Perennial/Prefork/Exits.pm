package Perennial::Prefork::Exits;
use v5.36;
use Config      ();
use POSIX       qw(WNOHANG);
use Time::HiRes ();

# The manager's side of a worker's end: reaped, logged with why (a recycle, a crash with the
# request it lost, a stop's or restart's doing) and, unless a stop is under way, replaced.
# Perennial::Prefork inherits these; they work on its state (workers, board, flags, companion)
# and call back into it (_count, _spawn, upgrade_ended).

my %BUSY     = (R => 1, W => 1);
my @SIG_NAME = split ' ', $Config::Config{sig_name};   ## no critic (ProhibitPackageVars) perl's own

# Collects exited workers; a worker that recycled itself is replaced at once. Not once a stop
# is asked for, even before the manager has read its flag: a TERM sent to the whole process
# group (systemd's default, timeout(1), kill -TERM -PGID) reaches the workers as it reaches
# the manager, and they exit before it reads it.
sub reap ($self) {
    while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
        my $status   = $?;
        my $stopping = $self->_stop_asked;
        $self->upgrade_ended($status) if $pid == ($self->{upgrade_pid} // 0);
        next if $self->{companion}->reaped($pid, $self->_how($status), $stopping);
        my $w = delete $self->{workers}{$pid} or next;
        $self->_log_exit(
            $pid, $status,
            $self->{board}->slot($w->{slot}),
            $self->_ended($w, $status)
        );
        $self->{board}->release($w->{slot});
        delete $self->{slots}{$w->{slot}};

        # Replace at once workers that recycled themselves, crashed after a good start,
        # belonged to an older generation or were retired to be replaced; a worker retired as
        # a spare, or one that failed as it started, waits for the once-a-second check
        next
            if $stopping
            || ($status && Time::HiRes::time() - $w->{born} < 1)
            || ($w->{retiring} && !$w->{replace} && $w->{generation} == $self->{generation});
        my ($idle, $total, $current) = $self->_count;
        $self->_spawn
            if $total < $self->{max_clients}
            && ($idle < $self->{min_spare} || $current < $self->{config}->start_servers);
    }
}

sub _stop_asked ($self) {
    return $self->{stopping} || $self->{flags}{stop} || $self->{flags}{graceful_stop};
}

# "status 3" or "signal 9, KILL", from a wait status
sub _how ($self, $status) {
    my $signal = $status & 127;
    return $signal ? "signal $signal, $SIG_NAME[$signal]" : 'status ' . ($status >> 8);
}

# A worker that died while busy lost its request. One that a stop or a restart ended ($ended)
# was told to go: what it was serving may have been cut short, or its response may have gone
# whole just before its scoreboard said so, a window no order of the two closes
sub _log_exit ($self, $pid, $status, $slot, $ended) {
    my $how = $self->_how($status);
    $self->{log}->info("worker $pid exited ($how, $slot->{requests} requests)");
    return if !$status || !$BUSY{$slot->{state}};
    my $doing = "serving '$slot->{request}' for $slot->{client}";
    return $self->{log}->warn("worker $pid ended by a stop or restart ($how) $doing: its "
            . 'response may have been cut short (graceful-stop and USR1 let requests finish)')
        if $ended;
    $self->{log}->error("worker $pid died ($how) $doing: that request is lost");
    return;
}

# Whether a stop or a restart ended the worker: the manager sent it TERM (and KILL when it
# ignored that), or the TERM or INT that asks the manager to stop reached the whole process
# group (systemd, kill -TERM -PGID, Ctrl-C) before the manager had read it. A worker killed
# by anything else meanwhile (the OOM killer, during a graceful stop) died.
sub _ended ($self, $w, $status) {
    my $signal = $status & 127;
    return $signal == POSIX::SIGTERM() || $signal == POSIX::SIGKILL() if $w->{terminated};
    return $self->{flags}{stop} && ($signal == POSIX::SIGTERM() || $signal == POSIX::SIGINT());
}

1;

__END__

=head1 NAME

Perennial::Prefork::Exits - the manager's side of a worker's end: reaped, logged, replaced

=head1 DESCRIPTION

Methods that L<Perennial::Prefork> inherits. C<reap> collects every worker that exited,
logs how (C<worker 4243 exited (signal 9, KILL, 120 requests)>), and logs a busy worker's end
as a crash that lost its request (error), or as the doing of a stop or restart (warn), as
L<Perennial::Manual::WorkerLife/CRASHES> describes; then replaces it unless a stop is under
way.

=cut
