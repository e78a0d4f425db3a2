package Perennial::Prefork::Restarts;
use v5.36;
use Time::HiRes ();

# The manager's ways of ending or renewing its pool: stop, graceful stop, restart, graceful
# restart, hot upgrade and log reopening. Perennial::Prefork inherits them; they work on its
# state (workers, generation, config) and call back into it (_spawn, reap, _retire, _count,
# _how).

my ($KILL_AFTER, $HANDOVER_LIMIT) = (10, 30);

sub graceful_restart ($self) {
    my $log = $self->{log};
    $log->info('graceful restart requested');
    $self->{on_event}->('reloading');
    my ($config, $code) = eval { $self->{reload}->() } or do {
        $log->error(
            "graceful restart refused, keeping the running configuration: " . ($@ || 'no config'));
        $self->{on_event}->('ready');    # Serving as before
        return;
    };
    $self->_use_config($config);
    $self->{code} = $code;
    $self->{board}->generation(++$self->{generation});
    my @old = map { $_->{pid} }
        grep { $_->{generation} < $self->{generation} && !$_->{retiring} }
        values %{$self->{workers}};
    $self->{handover}
        = {old => \@old, used => 0, until => Time::HiRes::time() + $HANDOVER_LIMIT};
    my (undef, $total) = $self->_count;
    my $room = $self->{max_clients} - $total;
    my $want = $config->start_servers;
    $self->_spawn for 1 .. ($room < $want ? $room : $want);
    $log->info("generation $self->{generation} started");
    $self->{on_event}->('ready');
    $self->hand_over;
}

# After a graceful restart, old workers are asked to finish one by one as new ones are ready
# (past S), so the pool never has fewer workers taking requests. When MaxClients leaves no room
# for a new worker, one old worker goes first to make some. A new generation that is not ready
# after 30 seconds does not keep the old one for ever.
sub hand_over ($self) {
    my $h       = $self->{handover};
    my $workers = $self->{workers};
    my @old     = grep { $workers->{$_} && !$workers->{$_}{retiring} } @{$h->{old}};
    return delete $self->{handover} if !@old;
    my $board = $self->{board};
    my @new   = grep { $_->{generation} == $self->{generation} } values %$workers;
    my $ready = grep { $board->state_of($_->{slot}) ne 'S' } @new;
    my $n     = $ready - $h->{used};

    if (Time::HiRes::time() >= $h->{until}) {
        $self->{log}->warn("generation $self->{generation} not ready after $HANDOVER_LIMIT s: "
                . 'stopping the old workers anyway');
        $n = @old;
    }
    elsif ($n < 1 && !@new) { $self->_retire($workers->{$old[0]}); return }
    $n = @old if $n > @old;
    return    if $n < 1;
    $h->{used} += $n;
    $self->_retire($_) for @$workers{@old[0 .. $n - 1]};
}

sub graceful_stop ($self) {
    my $log = $self->{log};
    $log->info('graceful stop requested');
    $self->{on_event}->('stopping');
    $self->_drain or return $self->stop;
    $self->{on_stop}->();
    $self->{stopping} = 1;
    $self->_retire($_) for values %{$self->{workers}};

    # What the parking process holds goes back into its channel for a successor's, after a hot
    # upgrade; otherwise idle connections are closed, as Apache closes them when it stops
    $self->{companion}->stop($self->{successor} ? 'graceful' : 'now');
    my $limit    = $self->{config}->graceful_shutdown_timeout;
    my $deadline = $limit ? Time::HiRes::time() + $limit : undef;
    while (%{$self->{workers}}) {
        if ($deadline && Time::HiRes::time() >= $deadline) {
            $log->warn("GracefulShutdownTimeout reached, stopping " .
                    keys(%{$self->{workers}}) . " workers");
            return $self->stop;
        }
        return $self->stop if delete $self->{flags}{stop};
        Time::HiRes::sleep(0.2);
        $self->reap;
        $self->_retire($_, 1) for values %{$self->{workers}};
    }
    $self->_await_companion;
    $log->info("manager $$ stopped");
    return 0;
}

# GracefulStopDrain: serving on for that many seconds while the health page says 'draining', so
# that a load balancer takes the instance out before it stops accepting; false when told to stop
# at once meanwhile
sub _drain ($self) {
    my $seconds = $self->{config}->graceful_stop_drain or return 1;
    $self->{log}->info("draining for $seconds s before the listeners close");
    $self->{board}->draining(1);
    my $until = Time::HiRes::time() + $seconds;
    while (Time::HiRes::time() < $until) {
        return 0 if delete $self->{flags}{stop};
        $self->reap;
        Time::HiRes::sleep(0.1);
    }
    return 1;
}

# A log that cannot be opened again (its directory gone) is no reason to stop serving: the old
# files stay in use, and the log says why
sub reopen_logs ($self) {
    my $log = $self->{log};
    if (!eval { $log->reopen; 1 }) {
        $log->error('logs not reopened, still writing to the old ones: ' . ($@ =~ s/\s+\z//r));
        return;
    }
    kill 'URG', keys %{$self->{workers}};
    $self->{companion}->renew;    # Its successor has the new logs, and takes its connections
    $log->info('logs reopened');
}

sub restart ($self) {
    my $log = $self->{log};
    $log->info('restart requested');
    $self->{on_event}->('reloading');
    my ($config, $code) = eval { $self->{reload}->() } or do {
        $log->error("restart refused, keeping the running configuration: " . ($@ || 'no config'));
        $self->{on_event}->('ready');
        return;
    };
    $self->_terminate_all;
    $self->_use_config($config);
    $self->{code} = $code;
    $self->{board}->generation(++$self->{generation});
    $self->_spawn for 1 .. $config->start_servers;
    $self->{unready} = 1;    # Ready again once StartServers of the new workers serve
}

sub stop ($self) {
    $self->{log}->info('stopping now');
    $self->{on_event}->('stopping');
    $self->{stopping} = 1;
    $self->{companion}->stop('now');    # It goes as the workers do
    $self->_terminate_all;
    $self->_await_companion;
    $self->{log}->info("manager $$ stopped");
    return 0;
}

# The companion asked to stop, reaped as it goes (TERM, then KILL, when it does not)
sub _await_companion ($self) {
    my $companion = $self->{companion};
    while ($companion->running) {
        $companion->press;
        Time::HiRes::sleep(0.02);
        $self->reap;
    }
    return;
}

sub _terminate_all ($self) {
    $_->{terminated} = 1 for values %{$self->{workers}};    # What they were serving: a warn
    kill 'TERM', keys %{$self->{workers}};
    my $deadline = Time::HiRes::time() + $KILL_AFTER;
    while (%{$self->{workers}}) {
        if (Time::HiRes::time() >= $deadline) {
            $self->{log}
                ->warn("killing workers that ignored TERM: @{[sort keys %{$self->{workers}}]}");
            kill 'KILL', keys %{$self->{workers}};
            $deadline += $KILL_AFTER;
        }
        Time::HiRes::sleep(0.05);
        local $self->{stopping} = 1;
        $self->reap;
    }
}

sub upgrade ($self) {
    my $log = $self->{log};
    return $log->error('upgrade refused: a new manager is already starting')
        if $self->{upgrade_pid};
    return $log->error('upgrade not available: serving in one process or without a command')
        unless $self->{upgrade};
    $log->info('upgrade requested');
    $self->{upgrade_pid} = $self->{upgrade}->();
    $self->{successor}   = 1 if $self->{upgrade_pid};
}

sub upgrade_ended ($self, $status) {
    delete $self->{upgrade_pid};
    return if !$status;
    delete $self->{successor};
    $self->{log}->error('upgrade failed: the new manager exited with '
            . $self->_how($status)
            . '; this manager keeps serving');
    $self->{upgrade_failed}->() if $self->{upgrade_failed};
}

1;

__END__

=head1 NAME

Perennial::Prefork::Restarts - stop, restart, upgrade and reopen for the manager

=head1 DESCRIPTION

The signal handlers' work for L<Perennial::Prefork>, which inherits these methods: TERM (stop
now), WINCH and QUIT (graceful stop), HUP (restart), USR1 (graceful restart), USR2 (hot
upgrade) and URG (reopen the logs). See L<Perennial::Prefork/SIGNALS>.

=head1 METHODS

=head2 graceful_restart

    $manager->graceful_restart;    # USR1

=head2 hand_over

    $manager->hand_over;    # each turn of the main loop while a graceful restart is under way

Asks as many old workers to finish as new ones have become ready.

=head2 graceful_stop

    my $exit_code = $manager->graceful_stop;    # WINCH, QUIT

=head2 reopen_logs

    $manager->reopen_logs;    # URG

=head2 restart

    $manager->restart;    # HUP

=head2 stop

    my $exit_code = $manager->stop;    # TERM, INT: workers get TERM, then KILL after 10 s

=head2 upgrade

    $manager->upgrade;    # USR2

=head2 upgrade_ended

    $manager->upgrade_ended($wait_status);

Called when the new manager a hot upgrade started exits: status 0 is a manager that put
itself in the background; anything else is a failed upgrade, logged.

=cut
