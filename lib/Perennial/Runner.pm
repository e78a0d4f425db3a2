package Perennial::Runner;
use v5.36;
use Perennial;
use Perennial::App;
use Perennial::Control;
use Perennial::Listener;
use Perennial::Log;
use Perennial::Prefork;
use Perennial::Scoreboard;
use Perennial::Server;

# Puts a server together from a Config: preloads, binds, writes the pid file, creates the
# scoreboard, then hands over to the manager (or serves in one process) until stopped.

sub new ($class, %args) {
    return bless {config => $args{config}, app => $args{app}, reconfigure => $args{reconfigure}},
        $class;
}

sub run ($self) {
    my $config = $self->{config};
    my $log    = Perennial::Log->new(config => $config);
    $log->warn($_) for $config->warnings;
    _preload($config);
    my $app       = $self->{app} // Perennial::App->build($config, $log);
    my @listeners = map {
        Perennial::Listener->new(spec => $_, backlog => $config->listen_backlog)
            ->set_timeout($config->timeout)
    } @{$config->listen};
    if ($config->daemonize) {
        die "--daemonize needs an error log: give --error-log FILE or ErrorLog\n"
            unless defined $config->error_log;
        Perennial::Control->daemonize;
    }
    my $pid_file = $config->pid_file;
    Perennial::Control->write_pid($pid_file) if defined $pid_file;
    my $board_file = $config->scoreboard_file
        // (defined $pid_file ? "$pid_file.scoreboard" : undef);
    my $board = Perennial::Scoreboard->create(slots => $config->server_limit, file => $board_file);
    $log->info('listening on '
            . join(', ', map { $_->name } @listeners)
            . " (Perennial $Perennial::VERSION)");
    @$self{qw(log board listeners)} = ($log, $board, \@listeners);
    my $server  = $self->_server($config, $app);
    my $cleanup = sub {
        $_->close for @listeners;
        Perennial::Control->remove_pid($pid_file) if defined $pid_file;
    };
    my $code = eval {
        return _single($server, $board) if $config->single_process;
        Perennial::Prefork->new(
            config           => $config,
            log              => $log,
            board            => $board,
            worker           => sub ($w) { $server->serve($w) },
            reload           => sub { $self->_reload },
            on_graceful_stop => $cleanup
        )->run;
    };
    my $err = $@;
    $cleanup->();
    unlink $board_file if defined $board_file;
    die $err unless defined $code;
    return $code;
}

sub _preload ($config) {
    unshift @INC, @{$config->includes};
    for my $file (@{$config->requires}) {
        my $ok = do $file;
        die "Can't load PerlRequire file $file: "
            . ($@ || $! || 'it did not return a true value') . "\n"
            unless $ok;
    }
    for my $module (@{$config->modules}) {
        next if $module =~ /\A(?:ModPerl|Apache2?)::/;  # Their work is built in: see Perennial::App
        die "Can't load module '$module': not a module name\n"
            unless $module =~ /\A\w+(?:::\w+)*\z/;
        (my $file = "$module.pm") =~ s{::}{/}g;
        eval { require $file; 1 } or die "Can't load module $module: $@";
    }
}

# USR1 and HUP: read the configuration again and build the next generation's application
sub _reload ($self) {
    my $old    = $self->{config};
    my $config = $self->{reconfigure} ? $self->{reconfigure}->() : $old;
    my $log    = $self->{log};
    $log->warn('Listen changed: a restart keeps the listeners; stop and start to change them')
        if join(' ', @{$config->listen}) ne join(' ', @{$old->listen});
    $config = $config->with(server_limit => $old->server_limit)
        if $config->server_limit != $old->server_limit;
    my $app = $self->{app} // Perennial::App->build($config, $log);
    $_->set_timeout($config->timeout) for @{$self->{listeners}};
    $log->reopen;
    $self->{config} = $config;
    my $server = $self->_server($config, $app);
    return ($config, sub ($w) { $server->serve($w) });
}

sub _server ($self, $config, $app) {
    return Perennial::Server->new(
        config    => $config,
        log       => $self->{log},
        board     => $self->{board},
        app       => $app,
        listeners => $self->{listeners}
    );
}

sub _single ($server, $board) {
    my $stopping = 0;
    local @SIG{qw(TERM INT QUIT WINCH)} = (sub { $stopping = 1 }) x 4;
    $board->claim(0, $$, 1);
    $server->serve({slot => 0, generation => 1, stopping => \$stopping, max_requests => undef});
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
