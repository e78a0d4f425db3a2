package Perennial::Runner;
use v5.36;
use POSIX        ();
use Linux::Prctl ();
use Perennial;
use Perennial::App;
use Perennial::Config::Ignored qw(ignored_summary);
use Perennial::ErrorText       qw(error_text);
use Perennial::Control;
use Perennial::Executor::Catalog;
use Perennial::Executor::Inc       ();
use Perennial::Executor::Libraries ();
use Perennial::HTTP::Core          ();
use Perennial::Listener;
use Perennial::Log;
use Perennial::Notify;
use Perennial::Preload;
use Perennial::Prefork;
use Perennial::Privileges;
use Perennial::Scoreboard;
use Perennial::Server;
use Perennial::ServerEnv;
use Perennial::Upgrade;

# Puts a server together from a Config: preloads, binds, writes the pid file, creates the
# scoreboard, then hands over to the manager (or serves in one process) until stopped.

sub new ($class, %args) {
    return bless {
        (map { $_ => $args{$_} } qw(config app reconfigure command replaces default_user)),
        notify => $args{notify} // Perennial::Notify->new,
    }, $class;
}

sub run ($self) {
    my $config = $self->{config};

    # The terminal, before the error log takes standard error over: why a start failed is
    # said on both
    open(my $terminal, '>&', \*STDERR) or die "Can't keep the terminal: $!\n";
    my $log = Perennial::Log->new(config => $config);
    my ($hooks, $app, @listeners);
    eval {
        ($hooks, $app) = $self->_prepare($config, $log);
        @listeners = map {
            Perennial::Listener->new(spec => $_, backlog => $config->listen_backlog)
                ->set_timeout($config->timeout)
        } @{$config->listen};
        1;
    } or do {
        my $err = error_text($@);
        $log->error("not started: $err");
        print {$terminal} "perennial: $err\n" if ($config->error_log // '-') ne '-';
        return 1;
    };
    close $terminal;
    my ($shared, $to) = @$self{qw(shared to)};
    if ($config->daemonize) {
        die "--daemonize needs an error log: give --error-log FILE or ErrorLog\n"
            unless defined $config->error_log;
        Perennial::Control->daemonize;
    }
    my $pid_file = $config->pid_file;
    Perennial::Control->write_pid($pid_file, $self->{replaces}) if defined $pid_file;
    my $board_file = $config->scoreboard_file
        // (defined $pid_file ? "$pid_file.scoreboard" : undef);
    my $board = Perennial::Scoreboard->create(slots => $config->server_limit, file => $board_file);
    $log->info('listening on '
            . join(', ', map { $_->name } @listeners)
            . " (Perennial $Perennial::VERSION, hot path in "
            . Perennial::HTTP::Core::implementation()
            . ')');
    @$self{qw(log board listeners)} = ($log, $board, \@listeners);
    $self->{park}                   = _park($config, $log);
    @$shared{qw(board listeners)}   = ($board, \@listeners);
    my $server = $self->_server($config, $app);
    undef $app;    # The server holds it: what holds the server decides how long it lives
    my $cleanup = sub {
        $_->close for @listeners;
        Perennial::Control->remove_pid($pid_file) if defined $pid_file;
    };
    my $code = eval {
        return _single($server, $board, $to, $log) if $config->single_process;
        my $prefork = Perennial::Prefork->new(
            config           => $config,
            log              => $log,
            board            => $board,
            worker           => $self->_worker($server, $hooks),
            reload           => sub { $self->_reload },
            on_graceful_stop => $cleanup,
            on_ready         => scalar $self->_on_ready,
            on_event         => $self->_on_event(\@listeners),
            upgrade          => $self->{command} && sub { $self->_upgrade },
            upgrade_failed   => sub { $_->disown(0) for @listeners },
            companion        => scalar $self->_parking_process,
        );

        # Prefork holds this generation's worker code (and through it the application) until a
        # reload gives the next: nothing here keeps the old one alive after that
        undef $server;
        $prefork->run;
    };
    my $err = $@;
    $cleanup->();
    $board->remove;
    die $err unless defined $code;
    return $code;
}

# What is loaded before the sockets are opened: the preloads and the application
sub _prepare ($self, $config, $log) {
    $log->warn($_) for $config->warnings;
    $log->info($_) for ignored_summary($config->ignored);
    my $to = $self->{to} = Perennial::Privileges->resolve(
        user    => $config->user,
        group   => $config->group,
        default => $self->{default_user}
    );
    if (my $who = Perennial::Privileges->describe($to)) {
        $to->{root} ? $log->warn($who) : $log->info($who);
    }
    if (my $file = Perennial::Privileges->unreadable($to, $INC{'Perennial.pm'})) {
        die "workers run as user $to->{user}, which cannot read Perennial's own modules ($file):"
            . " a directory above them is closed to it. Serve from a copy $to->{user} can read"
            . " (chmod o+rx on the directories), or run the workers as another user (User)\n";
    }
    $self->{preload} = Perennial::Preload->new(log => $log);
    my $hooks = $self->{preload}->load($config, defined $config->app || defined $self->{app});
    $self->{shared} = {};    # What the status pages read, filled in below
    my $app = $self->{app} // Perennial::App->build($config, $log, $self->{shared});
    _known_before_fork();
    return ($hooks, $app);
}

# The modules loaded so far are known to the script executors (Perennial::Executor::Inc), and
# the site's libraries among them stamped as they are (so a worker sees them change), before
# the workers fork: a worker that learnt them itself would copy pages it shares
sub _known_before_fork () {
    Perennial::Executor::Inc::sync();
    Perennial::Executor::Libraries::stamp_loaded();
    return;
}

# The channels of the parking process (Perennial::Park), made before anything forks: with a
# pool of workers, KeepAlive and ParkKeepAlive on, and the epoll the workers wait on
# (After a hot upgrade, the old manager's channels, with what they carry.)
sub _park ($config, $log) {
    my $inherited = Perennial::ServerEnv::started()->{PERENNIAL_PARK_FDS};    # Not the code's
    delete $ENV{PERENNIAL_PARK_FDS};
    if ($config->single_process || !$config->keep_alive || !$config->park_keep_alive) {
        POSIX::close($_) for split /,/, $inherited // '';    # Parking was turned off meanwhile
        return;
    }
    if (!eval { require Linux::Epoll; require Perennial::Park; require Perennial::Park::Lot; 1 }) {
        $log->warn('idle connections are not parked: ' . ($@ =~ s/\s+\z//r));
        return;
    }
    return Perennial::Park->new($inherited);
}

# The parking process's life (Perennial::Park::Lot), for the manager to keep: it gives up root
# as workers do, and goes when the manager dies
sub _parking_process ($self) {
    my $park = $self->{park} or return;
    my ($to, $log, $board, $listeners) = @$self{qw(to log board listeners)};
    my $manager = $$;
    return {
        name    => 'parking process',
        on_exit => sub { $board->parked(0); $board->spooled(0) },    # What it held is gone with it
        run     => sub ($stopping) {
            CORE::close($_->fh) for @$listeners;    # Not its to accept on (nor to unlink)
            Perennial::Privileges->drop($to);
            _watch_manager({stopping => $stopping}, $manager);
            my $lot = Perennial::Park::Lot->new(
                park     => $park,
                board    => $board,
                log      => $log,
                stopping => $stopping
            );
            return $lot->run;
        }
    };
}

# What the manager's events (ready, reloading, stopping) tell systemd, when it started us
sub _on_event ($self, $listeners) {
    my ($notify, $log) = @$self{qw(notify log)};
    return sub ($event) {
        my $status
            = $event eq 'ready'     ? 'serving on ' . join(', ', map { $_->name } @$listeners)
            : $event eq 'reloading' ? 'reading the configuration again'
            :                         'stopping';
        $notify->event($event, $status) or $log->warn("systemd not told '$event': $!");
    };
}

# A new manager started by a hot upgrade asks the old one to stop once its workers are ready
sub _on_ready ($self) {
    my $old = $self->{replaces} or return;
    return sub () {
        $self->{log}->info("upgrade: workers ready, asking manager $old to stop gracefully");
        kill 'QUIT', $old;
    };
}

# USR1 and HUP: read the configuration again, run the preloads again and build the next
# generation's application
sub _reload ($self) {
    my $old    = $self->{config};
    my $config = $self->{reconfigure} ? $self->{reconfigure}->() : $old;
    my $log    = $self->{log};
    $log->warn('Listen changed: a restart keeps the listeners; stop and start to change them')
        if join(' ', @{$config->listen}) ne join(' ', @{$old->listen});
    $config = $config->with(server_limit => $old->server_limit)
        if $config->server_limit != $old->server_limit;
    my $hooks = $self->{preload}->load($config, defined $config->app || defined $self->{app});
    my $app   = $self->{app} // Perennial::App->build($config, $log, $self->{shared});
    _known_before_fork();    # What this generation loaded
    $_->set_timeout($config->timeout) for @{$self->{listeners}};
    $log->reopen;
    $self->{config} = $config;
    my $server = $self->_server($config, $app);
    return ($config, $self->_worker($server, $hooks));
}

# USR2: a new manager with the same command line takes the listeners over
sub _upgrade ($self) {
    $_->disown(1) for @{$self->{listeners}};
    return Perennial::Upgrade->start(
        log       => $self->{log},
        listeners => $self->{listeners},
        command   => $self->{command},
        park      => $self->{park},
        notify    => $self->{notify}->socket_path,
    );
}

# A worker's life: its init hooks, serving, its exit hooks (also when told to stop at once,
# as Apache's children run their child_exit hooks on TERM)
sub _worker ($self, $server, $hooks) {
    my $preload = $self->{preload};
    my $to      = $self->{to};
    my $manager = $$;
    my $warn    = _warnings_to($self->{log});    # Made here: in each worker it copied pages

    # The scripts the manager compiled, which each worker has as it starts (the text made here
    # once: made in each worker, it copied the pages of every executor's catalog)
    my $compiled = Perennial::Executor::Catalog::as_text();
    return sub ($w) {
        $w->{unprivileged} = Perennial::Privileges->drop($to);
        _watch_manager($w, $manager);

        # An application's warnings are its own lines of the error log (not the command line's
        # "perennial: ..."); a script's are logged with its path by the executor
        local $SIG{__WARN__} = $warn;
        my %about = (slot => $w->{slot}, generation => $w->{generation});
        my $bye   = sub () { $preload->run_hooks($hooks->{exit}, PerlChildExitHandler => \%about) };
        _publish_scripts($self->{board}, $w->{slot}, $compiled);
        local $SIG{TERM}
            = @{$hooks->{exit}} ? sub ($signal) { $bye->(); POSIX::_exit(0) } : $SIG{TERM};
        $preload->run_hooks($hooks->{init}, PerlChildInitHandler => \%about);
        my $code = $server->serve($w);
        $bye->();
        return $code;
    };
}

# The handler that makes an application's warnings lines of the error log
sub _warnings_to ($log) {
    return sub ($msg) { $log->warn($msg) };
}

# A worker whose manager dies (kill -9) finishes its request and goes, instead of serving on
# where no stop can reach it: the kernel sends it QUIT then (PR_SET_PDEATHSIG, set after the
# worker gave up root, which clears it)
sub _watch_manager ($w, $manager) {
    Linux::Prctl::set_pdeathsig(POSIX::SIGQUIT());
    ${$w->{stopping}} = 1 if getppid() != $manager;    # Gone already
    return;
}

# The worker's compiled scripts go to its scoreboard notes now and after each compile, for
# the Perl status page
sub _publish_scripts ($board, $slot, $compiled) {
    my $publish = sub () { $board->note($slot, Perennial::Executor::Catalog::as_text()) };
    Perennial::Executor::Catalog::on_change($publish);
    $board->note($slot, $compiled);
}

sub _server ($self, $config, $app) {
    return Perennial::Server->new(
        config    => $config,
        log       => $self->{log},
        board     => $self->{board},
        app       => $app,
        listeners => $self->{listeners},
        park      => $config->keep_alive && $config->park_keep_alive ? $self->{park} : undef,
        log_of    => $self->{shared}{log_of},    # A virtual host's logs, for a refused request

        # A site whose URLs may map to scripts: its workers watch them (Perennial::FileWatch)
        watch_files => Perennial::App->serves_files($config),
    );
}

sub _single ($server, $board, $to, $log) {
    my $stopping     = 0;
    my $unprivileged = Perennial::Privileges->drop($to);
    local @SIG{qw(TERM INT QUIT WINCH)} = (sub { $stopping = 1 }) x 4;
    local $SIG{__WARN__} = _warnings_to($log);                           # As a worker's
    $board->claim(0, $$, 1);
    _publish_scripts($board, 0, Perennial::Executor::Catalog::as_text());
    $server->serve(
        {   slot         => 0,
            generation   => 1,
            stopping     => \$stopping,
            max_requests => undef,
            unprivileged => $unprivileged
        }
    );
    return 0;
}

1;

__END__

=head1 NAME

Perennial::Runner - start a server from a configuration and run it until it stops

=head1 SYNOPSIS

    my $config = Perennial::Config->load(file => 'perennial.conf');
    exit Perennial::Runner->new(config => $config)->run;

=head1 DESCRIPTION

Loads the C<-M>/C<PerlModule> modules and the applications in the manager (so workers share
them copy-on-write), binds the listeners, daemonizes if asked, writes the pid file, creates the
scoreboard (a file next to the pid file, so C<perennial status> can read it) and runs
L<Perennial::Prefork>, or serves in one process with C<single_process>. On a graceful restart
the C<reconfigure> callback gives the new configuration and the applications are loaded again.

=head1 METHODS

=head2 new

    my $runner = Perennial::Runner->new(config => $config, app => $app, reconfigure => sub { ... });

C<app> serves a PSGI code reference instead of the configuration's locations.

=head2 run

    my $exit_code = $runner->run;

=cut
