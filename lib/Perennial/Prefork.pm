package Perennial::Prefork;
use v5.36;
use Config                   ();
use POSIX                    ();
use Time::HiRes              ();
use Perennial::Prefork::Fork qw(fork_guarded);
use Perennial::Prefork::Companion;
use Perennial::Prefork::Recycle;
use Perennial::Prefork::Exits;
use Perennial::Prefork::Restarts;
use parent -norequire, 'Perennial::Prefork::Restarts', 'Perennial::Prefork::Exits';
use Perennial::Watchdog;

# The manager: keeps a pool of workers as Apache's prefork MPM does. It knows nothing of HTTP:
# a worker's life is the code reference it is given, and the only state it reads is the
# scoreboard's letter per slot.

my ($MAX_SPAWN_RATE, $WATCH_EVERY) = (32, 0.1);
my %IDLE     = ('_' => 1, S => 1);
my @SIG_NAME = split ' ', $Config::Config{sig_name};   ## no critic (ProhibitPackageVars) perl's own
my %SIG_NUM;
@SIG_NUM{@SIG_NAME} = split ' ', $Config::Config{sig_num};    ## no critic (ProhibitPackageVars)
my %FLAGS = (
    TERM  => 'stop',
    INT   => 'stop',
    WINCH => 'graceful_stop',
    QUIT  => 'graceful_stop',
    USR1  => 'graceful',
    USR2  => 'upgrade',
    URG   => 'reopen',
    HUP   => 'restart',
    TTIN  => 'ttin',
    TTOU  => 'ttou',
    CHLD  => 'child'
);

sub new ($class, %args) {
    my $self = bless {
        log            => $args{log},
        board          => $args{board},
        code           => $args{worker},
        reload         => $args{reload},
        on_stop        => $args{on_graceful_stop} // sub { },
        on_ready       => $args{on_ready},
        on_event       => $args{on_event} // sub ($event) { },
        unready        => 1,
        upgrade        => $args{upgrade},
        upgrade_failed => $args{upgrade_failed},
        workers        => {},
        slots          => {},
        generation     => 1,
        rate           => 1,
        flags          => {},
    }, $class;
    $self->{recycle}   = Perennial::Prefork::Recycle->new(config => $args{config});
    $self->{companion} = Perennial::Prefork::Companion->new(
        %{$args{companion} // {}},    # None, unless given its run
        log     => $args{log},
        signals => {map { $_ => $SIG_NUM{$_} } keys %FLAGS}
    );
    $self->_use_config($args{config});
    return $self;
}

sub run ($self) {
    my $log = $self->{log};

    # The handlers are held here too, so that a worker replacing them does not free them:
    # freeing a closure writes to all it holds, on pages the worker shares with the manager
    # (some 30 copied in each, bench/pages.pl)
    my @handlers = map {
        my $f = $_;
        sub { $self->{flags}{$f}++ }
    } values %FLAGS;
    local @SIG{keys %FLAGS} = @handlers;
    $self->{board}->generation($self->{generation});
    $log->info("manager $$ started");
    $self->{companion}->start;
    $self->_spawn for 1 .. $self->{config}->start_servers;
    my $tick = Time::HiRes::time() + 1;
    while (1) {
        $self->reap;
        my $flags = $self->{flags};
        $self->{flags} = {};
        return $self->stop          if $flags->{stop};
        return $self->graceful_stop if $flags->{graceful_stop};
        $self->_act($flags);
        my $now = Time::HiRes::time();
        if ($now >= $tick) { $self->_maintain; $tick = $now + 1 }
        Perennial::Watchdog->watch($self->{board}, $self->{workers}, $log) if $self->{watch};
        $self->_ready                                                      if $self->{unready};
        $self->hand_over                                                   if $self->{handover};
        next                                                               if %{$self->{flags}};
        my $wait = $tick - Time::HiRes::time();
        $wait = $WATCH_EVERY if $self->{watch} && $wait > $WATCH_EVERY;
        Time::HiRes::sleep($wait) if $wait > 0;
    }
}

# The signals that change the pool without ending it
sub _act ($self, $flags) {
    $self->graceful_restart if $flags->{graceful};
    $self->restart          if $flags->{restart};
    $self->reopen_logs      if $flags->{reopen};
    $self->upgrade          if $flags->{upgrade};
    $self->_resize(1)  for 1 .. ($flags->{ttin} // 0);
    $self->_resize(-1) for 1 .. ($flags->{ttou} // 0);
}

sub _count ($self) {
    my ($idle, $total, $current) = (0, 0, 0);
    for my $w (values %{$self->{workers}}) {
        $total++;
        next if $w->{generation} != $self->{generation} || $w->{retiring};
        $current++;
        $idle++ if $self->_idle($w);
    }
    return ($idle, $total, $current);
}

# A worker's QUIT sets its stop flag, URG its reopen-the-logs flag. SA_RESTART lets the
# application's own system calls (a database read) carry on; accept() and reads on the client,
# which have a timeout, and select() and epoll still return EINTR, so an idle worker notices at
# once.
sub _flag_action ($flag) {
    my $action = POSIX::SigAction->new(sub { $$flag = 1 }, POSIX::SigSet->new, POSIX::SA_RESTART());
    $action->safe(1);
    return $action;
}

sub _install ($signal, $action) {
    POSIX::sigaction($signal, $action) or die "Can't install a handler for signal $signal: $!\n";
}

sub _maintain ($self) {
    my ($idle, $total) = $self->_count;
    my $log = $self->{log};
    $self->{companion}->start;    # Again, if it died
    $self->_retire($_, 1) for grep { $_->{retiring} } values %{$self->{workers}};
    for my $due ($self->{recycle}->due($self->{workers}, sub ($w) { $self->_idle($w) })) {
        my ($w, $why) = @$due;
        $log->info("worker $w->{pid} retires after its request: $why");
        $w->{replace} = 1;
        $self->_retire($w);
    }
    if ($idle > $self->{max_spare}) {
        my ($victim) = sort { $b->{slot} <=> $a->{slot} }
            grep { $_->{generation} == $self->{generation} && !$_->{retiring} && $self->_idle($_) }
            values %{$self->{workers}};
        $self->_retire($victim) if $victim;
        $self->{rate} = 1;
        return;
    }
    if ($idle >= $self->{min_spare}) { $self->{rate} = 1; $self->{reported} = 0; return }
    my $room = $self->{max_clients} - $total;
    if ($room <= 0) {
        if (!$idle && !$self->{reported}++) {
            my $name = $self->{config}->max_clients_directive;
            $log->error("server reached $name setting, consider raising the $name setting");
        }
        return;
    }
    my $n = $self->{rate} < $room ? $self->{rate} : $room;
    $log->info("server seems busy (you may need to increase StartServers, or Min/MaxSpareServers), "
            . "spawning $n children, there are $idle idle, and $total total children")
        if $self->{rate} >= 8;
    $log->debug("spawning $n workers ($idle idle, $total in all)");
    $self->_spawn for 1 .. $n;
    $self->{rate} *= 2 if $self->{rate} < $MAX_SPAWN_RATE;
}

sub _idle ($self, $w) { $IDLE{$self->{board}->state_of($w->{slot})} }

# Once StartServers workers are serving (past S): the event 'ready' (systemd is told), and a
# new manager's signal to the old one
sub _ready ($self) {
    my $board = $self->{board};
    my $ready = grep { $board->state_of($_->{slot}) ne 'S' } values %{$self->{workers}};
    return if $ready < $self->{config}->start_servers;
    $self->{unready} = 0;
    $self->{on_event}->('ready');
    (delete $self->{on_ready})->() if $self->{on_ready};
}

sub _resize ($self, $by) {
    my $config = $self->{config};
    my (undef, $total) = $self->_count;
    if ($by > 0) {
        $self->{max_clients}++
            if $total >= $self->{max_clients} && $self->{max_clients} < $config->server_limit;
        $self->{min_spare}++;
        $self->{max_spare}++;
        $self->_spawn if $total < $self->{max_clients};
    }
    else {
        $self->{max_clients}-- if $self->{max_clients} > $config->max_clients;
        $self->{min_spare}--   if $self->{min_spare} > 0;
        $self->{max_spare}--   if $self->{max_spare} > $self->{min_spare} + 1;
        my ($victim) = sort { $b->{slot} <=> $a->{slot} }
            grep { $_->{generation} == $self->{generation} && !$_->{retiring} }
            values %{$self->{workers}};
        $self->_retire($victim) if $victim;
    }
    $self->{log}->info(($by > 0 ? 'TTIN: one worker more' : 'TTOU: one worker less')
        . " (MinSpareServers $self->{min_spare}, MaxSpareServers $self->{max_spare}, "
            . $config->max_clients_directive
            . " $self->{max_clients})");
}

# Asks a worker to finish its request and exit. Asked again each second while it still looks
# idle, in case the signal landed just before it blocked in accept().
sub _retire ($self, $w, $again = 0) {
    return if $again && (!$w->{retiring} || !$self->_idle($w));
    $self->{log}->info("stopping worker $w->{pid} gracefully") unless $w->{retiring}++;
    kill 'QUIT', $w->{pid};
}

sub _spawn ($self) {
    my ($slot) = grep { !$self->{slots}{$_} } 0 .. $self->{config}->server_limit - 1;
    return unless defined $slot;
    my $board = $self->{board};
    $board->claim($slot, 0, $self->{generation});
    my $limit = $self->_request_limit;

    # The worker's own signals, for the rest of its life (so not local), before any can reach it;
    # their handlers made before the fork, in the manager's memory that the worker shares
    my ($stopping, $reopen) = (0, 0);
    my ($on_quit, $on_urg) = (_flag_action(\$stopping), _flag_action(\$reopen));
    my $pid = fork_guarded(
        [@SIG_NUM{keys %FLAGS}],
        sub {
            _install(POSIX::SIGQUIT(), $on_quit);
            _install(POSIX::SIGURG(),  $on_urg);
            for my $name (grep { $_ ne 'QUIT' && $_ ne 'URG' } keys %FLAGS) {
                $SIG{$name} = 'DEFAULT';    ## no critic (RequireLocalizedPunctuationVars)
            }

            # Ctrl-C in a terminal reaches the whole process group: the manager decides what the
            # workers do (TERM), so a worker does not die from it in the middle of a request
            $SIG{INT} = 'IGNORE';    ## no critic (RequireLocalizedPunctuationVars)
        }
    );
    if (!defined $pid) {
        $self->{log}->error("Can't fork a worker: $!");
        $board->release($slot);
        return;
    }
    if (!$pid) {
        srand;
        $0 = 'perennial worker';    ## no critic (RequireLocalizedPunctuationVars)
        $board->set($slot, pid => $$);

        # The manager's own state stays as it is, unused: emptying it here wrote to all it
        # held, which copied some 50 pages of the manager's memory into each worker
        $self->{code}->(
            {   slot         => $slot,
                generation   => $board->generation,
                stopping     => \$stopping,
                reopen       => \$reopen,
                max_requests => $limit
            }
        );
        CORE::exit(0);
    }
    $board->set($slot, pid => $pid);
    $self->{slots}{$slot}  = 1;
    $self->{workers}{$pid} = {
        pid        => $pid,
        slot       => $slot,
        generation => $self->{generation},
        born       => Time::HiRes::time(),
        lifetime   => scalar $self->{recycle}->lifetime
    };
    $self->{log}->info("worker $pid started");
}

sub _request_limit ($self) {
    my $max    = $self->{config}->max_requests_per_child or return;
    my $jitter = $self->{config}->max_requests_jitter;
    $jitter = int($max * $1 / 100) if $jitter =~ /\A(\d+)%\z/;
    $jitter = $max - 1             if $jitter >= $max;
    return $max - int rand($jitter + 1);
}

# The new manager exits at once when it daemonized (status 0) or when it failed
sub _use_config ($self, $config) {
    $self->{config} = $config;
    $self->{recycle}->configure($config);
    $self->{watch}
        = $config->request_deadline
        || $config->slow_request_time
        || grep { $_->{request_deadline} || $_->{slow_request_time} } @{$config->sections};
    @$self{qw(min_spare max_spare max_clients)}
        = ($config->min_spare_servers, $config->max_spare_servers, $config->max_clients);
    $self->{reported} = 0;
}

1;

__END__

=head1 NAME

Perennial::Prefork - keep a pool of worker processes as Apache's prefork MPM does

=head1 SYNOPSIS

    my $manager = Perennial::Prefork->new(config => $config, log => $log, board => $board,
        worker => sub ($worker) { serve_until(${$worker->{stopping}}) },
        reload => sub { return ($new_config, $new_code) });
    exit $manager->run;

=head1 DESCRIPTION

Starts StartServers workers, then once a second counts the idle ones on the scoreboard: it
forks 1, 2, 4 ... up to 32 a second while fewer than MinSpareServers are idle, stops one idle
worker a second while more than MaxSpareServers are, and never runs more than MaxClients. When
MaxClients is reached with no worker idle, it logs "server reached MaxClients setting" once per
episode. Workers that exit after MaxRequestsPerChild (with a random jitter) are replaced at once.

=head1 SIGNALS

=over

=item TERM, INT

Stop now: workers get TERM (KILL after 10 seconds).

=item WINCH, QUIT

Graceful stop: workers finish their current request; after GracefulShutdownTimeout (when not
0) the rest get TERM.

=item USR1

Graceful restart: the C<reload> callback gives a new config and worker code; old workers finish
their request and exit while a new generation starts. If the callback dies, the running
configuration stays and the error is logged.

=item HUP

Restart: workers are stopped at once, the configuration is reloaded, and a new generation starts.

=item USR2

Hot upgrade: the C<upgrade> callback starts a new manager that takes the listening sockets
over (L<Perennial::Upgrade>); a new manager calls C<on_ready> once StartServers of its workers
are serving, to stop the old one. If the new manager exits with an error, C<upgrade_failed> is
called and this one serves on.

=item URG

Reopen the logs, here and in every worker (workers do it between connections).

=item TTIN, TTOU

One worker more or less: MinSpareServers and MaxSpareServers go up or down by one (and
MaxClients too when the pool is full), until the next restart.

=back

Workers get QUIT to finish their request and exit, TERM to stop at once, URG to reopen the
logs, and from L<Perennial::Watchdog> XCPU (deadline) and PROF (stack sample).

Once a second the manager also retires workers past C<MaxLifetime> and, over
C<PoolPrivateLimit>, the largest idle ones (L<Perennial::Prefork::Recycle>); with request
deadlines or a slow-request time configured it looks at the busy workers ten times a second.

=head1 EVENTS

Log lines at info: C<manager N started>, C<worker N started>, C<worker N exited (status S, R
requests)> (or C<signal N, NAME>), C<stopping worker N gracefully>, C<worker N retires after
its request: REASON>, C<generation N started>, C<logs reopened>, C<upgrade requested>,
C<manager N stopped>. At error: C<worker N died (HOW) serving 'REQUEST' for CLIENT: that request
is lost>, C<upgrade failed: ...>.

=head1 METHODS

=head2 new

    my $manager = Perennial::Prefork->new(config => $c, log => $l, board => $b, worker => $code);

C<reload>, C<on_graceful_stop>, C<on_ready>, C<upgrade> and C<upgrade_failed> are optional
callbacks.

=head2 run

    my $exit_code = $manager->run;

Runs the pool until it is stopped; returns the process exit code.

=cut
