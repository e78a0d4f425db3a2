package Perennial::Server;
use v5.36;
use Errno       qw(EINTR EAGAIN);
use IO::Handle  ();
use Time::HiRes ();
use Perennial::Connection;
use Perennial::FileWatch;
use Perennial::HTTP::Core          qw(accept_client next_ready peer_of waiter);
use Perennial::Listener::Options   qw(listener_options);
use Perennial::Config::VirtualHost qw(server_name_parts);
use Perennial::HTTP::Response      ();
use Perennial::SizeLimit;
use Perennial::Watchdog;

# A worker's life: accept a connection, hand it to Perennial::Connection, repeat until told to
# stop or until the request limit is reached.

sub new ($class, %args) {
    my $self
        = bless {map { $_ => $args{$_} }
            qw(config log board app listeners park watch_files log_of)},
        $class;
    Perennial::HTTP::Response::server_tokens($self->{config}->server_tokens);
    my @named = server_name_parts($self->{config}->server_name // '');
    $self->{base} = [map { _base_env($_, @named) } @{$self->{listeners}}];

    # Worked out here, in the manager, once: in each worker it copied pages it shares with the
    # manager (bench/pages.pl --from-fork). Each worker counts its own requests in its copy of
    # the size limit.
    $self->{settings} = Perennial::Connection->settings($self->{config},
        [map { listener_options($self->{config}, $_) } @{$self->{listeners}}]);
    $self->{size_limit} = Perennial::SizeLimit->new(config => $self->{config});
    $self->{watchdog}   = Perennial::Watchdog->new(board => $self->{board}, log => $self->{log});
    $self->{listening}  = _listening_of($self->{listeners});
    return $self;
}

# The listening sockets, not blocking (a worker's epoll, or select without one, waits for a
# connection; the flag is the socket's, so set once for every worker), and which of them are
# Unix sockets
sub _listening_of ($listeners) {
    my @fh = map { $_->fh } @$listeners;
    IO::Handle::blocking($_, 0) for @fh;
    return [\@fh, [map { $_->is_unix } @$listeners]];
}

# Connections are accepted and served by the loop in C (xs/Loop.c) when it was built
my $ACCEPT_IN_C = Perennial::HTTP::Core::implementation() eq 'C';

# What the worker loop keeps for its own ending and for a process the application forks: the
# listening sockets and the connection loop (the request path itself keeps no globals)
my @LISTENING;
my $SERVING;

# An application that calls CORE::exit ends the worker mid-request; perl still runs END
# blocks, so the client gets a 500 instead of a silently closed connection
END { $SERVING->abort_request(500) if $SERVING }

# For a process that the application forks to live on (a script's accept loop): the worker's
# listening sockets and the client's connection are not its to hold open
sub leave_in_fork ($class) {
    CORE::close($_) for @LISTENING, grep {defined} $SERVING && $SERVING->client_socket;
    return;
}

sub serve ($self, $worker) {
    if (!$self->_epoll) {    # Without one, the worker would never take back a parked connection
        $self->{log}->error("worker $$ leaves: it cannot make its epoll instance: $!");
        return 1;
    }
    my ($board, $slot) = ($self->{board}, $worker->{slot});
    my $stopping  = $worker->{stopping};
    my $remaining = $worker->{max_requests};
    my $log       = $self->{log};
    my $conn      = $self->_connection_loop($worker);
    my ($fh, $unix, $accept) = $self->_listening;
    local $SIG{PIPE} = 'IGNORE';
    my $reopen = $worker->{reopen} // \0;
    @$self{qw(stopping reopen)} = ($stopping, $reopen);    # For the loop in C and _left_ready

    my $in_c = $ACCEPT_IN_C && defined $self->{epoll};

    # Only a worker that gave up root publishes its memory (_publish_memory)
    $self->{memory_due} = $worker->{unprivileged} ? 0 : 9**9**9;
    while (!$$stopping) {
        last                          if $$reopen && !_reopened($worker, $log);
        $self->_publish_memory($slot) if Time::HiRes::time() >= $self->{memory_due};

        my ($served, $take, $ready)
            = $in_c
            ? $self->_serve_in_c($conn, $fh, $unix, $remaining)
            : (0, 1);
        $served += $self->_take($conn, $worker, $accept, $fh, $unix, $remaining, $ready) // 0
            if $take;
        if (defined $remaining && ($remaining -= $served) <= 0) {
            $self->{log}
                ->info("worker $$ reached MaxRequestsPerChild ($worker->{max_requests} requests)");
            last;
        }
        last if $conn->wants_exit;
    }
    $board->state($slot, $$stopping ? 'I' : 'C');
    return 0;
}

# The loop in C accepts and serves connections while nothing here is due, and leaves to the
# Perl a connection it does not take: (requests served, whether the Perl takes the next one,
# the index of the handle it is on). Back after an idle second (nothing served, nothing to
# take), a connection that another worker was woken for and left is this one's (_left_ready).
sub _serve_in_c ($self, $conn, $fh, $unix, $remaining) {
    my ($served, $take, $ready)
        = Perennial::HTTP::Core::xs_serve_connections($conn, $self->{epoll}, $fh, $self->{base},
        $unix, @$self{qw(stopping reopen memory_due)}, $remaining);
    if (!$served && !$take) {
        $take = defined($ready = $self->_left_ready);
        $self->{files}->notice if $self->{files};    # What an idle second brought, read
    }
    return ($served, $take, $ready);
}

# The next connection, taken and served here: its requests, or nothing when none came. $ready:
# the index of the handle that has it, when the loop in C waited already
sub _take ($self, $conn, $worker, $accept, $fh, $unix, $remaining, $ready = undef) {
    $self->{board}->state($worker->{slot}, '_');
    my ($client, $index, $peer, $resumed) = $self->$accept($fh, $worker->{stopping}, $ready)
        or return;
    $self->{listeners}[$index]->prepare($client) if $unix->[$index];

    # Asked while it waited: the request it took goes to the new logs already
    _reopened($worker, $self->{log}) if ${$worker->{reopen} // \0} && !$worker->{unprivileged};
    return $conn->serve($client, $self->{base}[$index], $peer, $remaining, $index, $resumed);
}

# The worker's connection loop, and its watchdog, which the request path arms through the
# request ($env->{'perennial.watchdog'}) and whose signal handlers answer for the connection;
# with the loop in C, on a site that serves files, the worker's file watch
sub _connection_loop ($self, $worker) {
    $self->{files} = Perennial::FileWatch->new(log => $self->{log})
        if $ACCEPT_IN_C && $self->{watch_files};
    my $conn = $SERVING = Perennial::Connection->new(
        config        => $self->{config},
        app           => $self->{app},
        log           => $self->{log},
        board         => $self->{board},
        slot          => $worker->{slot},
        stopping      => $worker->{stopping},
        park          => $self->{park},
        files         => $self->{files},
        after_request => scalar $self->_size_limit,
        size_limit    => $self->{size_limit}->is_set ? $self->{size_limit} : undef,
        settings      => $self->{settings},
        log_of        => $self->{log_of},
    );
    my $watchdog = $self->{watchdog}->install(slot => $worker->{slot}, connection => $conn);
    $_->{'perennial.watchdog'} = $watchdog for @{$self->{base}};
    return $conn;
}

# The listening sockets, which of them are Unix sockets, and the accept that waits on them.
# Each call on a connection's way costs 1.5k to 3k instructions: the loop makes only those it
# needs (the memory, when it is due; a connection's timeouts, on a Unix socket).
sub _listening ($self) {
    my ($fh, $unix) = @{$self->{listening}};
    @LISTENING = @$fh;
    return ($fh, $unix, defined $self->{epoll} ? \&_accept_epoll : \&_accept);
}

# The logs reopened, as the manager asked (URG); false when the worker leaves instead: one that
# gave up root cannot open root's logs, so its successor inherits them
sub _reopened ($worker, $log) {
    ${$worker->{reopen}} = 0;
    if ($worker->{unprivileged}) {
        $log->info("worker $$ leaves so that a new one writes to the reopened logs");
        return 0;
    }
    eval { $log->reopen; 1 }
        or $log->error("worker $$ did not reopen the logs: " . ($@ =~ s/\s+\z//r));
    return 1;
}

# A worker that gave up root tells the scoreboard its memory (its siblings, who serve the
# status pages, cannot read its /proc files): as it starts, then at most every 5 seconds,
# between connections (smaps_rollup costs about 170 us); serve asks whether it is due
sub _publish_memory ($self, $slot) {
    $self->{memory_due} = Time::HiRes::time() + 5;
    my $m = Perennial::SizeLimit::memory($$) or return;
    $self->{board}->publish_memory($slot, $m);
}

# Apache2::SizeLimit's check after each request, when a limit is set
sub _size_limit ($self) {
    my $limit = $self->{size_limit};
    return unless $limit->is_set;
    my $log = $self->{log};
    return sub ($size = undef) {    # The resident size, when the loop in C read it
        my $why = (defined $size ? $limit->judge($size) : $limit->exceeded) or return 0;
        $log->info("worker $$ retires after this request: $why");
        return 1;
    };
}

# A connection just accepted (without the epoll below, when the worker could not make one),
# and the index of its listener
sub _accept ($self, $fh, $stopping, $ = undef) {
    my $rin = '';
    vec($rin, fileno $_, 1) = 1 for @$fh;
    my $n = select(my $rout = $rin, undef, undef, 1);    # At most a second, as next_ready waits
    return () if $n <= 0 || $$stopping;
    for my $i (0 .. $#$fh) {
        next unless vec($rout, fileno $fh->[$i], 1);
        my ($client, $peer) = accept_client($fh->[$i]);
        return ($client, $i, $peer) if $client;
        $self->_accept_failed unless $! == EAGAIN || $! == EINTR;
    }
    return ();
}

# Each worker waits on an epoll instance of its own, in which the listeners and the parking
# process's handle are exclusive (EPOLLEXCLUSIVE): Linux wakes one waiting worker for each new
# connection, the first to have made its epoll, so under light load the same few workers,
# with warm caches, take the requests (a blocking accept() wakes them in turn, and every
# request meets a cold one). One shared epoll instance woke one worker and then, as the
# listener stayed readable, the next ones in a chain, whose accepts failed (docs/design-notes.md).
# A connection just accepted, or one back from the parking process with its state.
sub _accept_epoll ($self, $fh, $, $ready = undef) {
    my $i = $ready // next_ready($self->{epoll}) // $self->_left_ready // return ();
    return $self->_resume if $i == @$fh;    # The parking process's handle, after the listeners
    my ($client, $peer) = accept_client($fh->[$i]);
    return ($client, $i, $peer) if $client;
    $self->_accept_failed unless $! == EAGAIN || $! == EINTR;
    return ();
}

# The worker's epoll, made after it forked (one made before would be shared, see above); false
# when there is none and the worker needs one (to take back parked connections)
sub _epoll ($self) {
    my @handles = map { $_->fh } @{$self->{listeners}};
    push @handles, $self->{park}->ready_handle if $self->{park};
    $self->{epoll}  = waiter(\@handles);
    $self->{waited} = \@handles;
    return defined $self->{epoll} || !$self->{park};
}

# The index of a handle the epoll waits on that can be read now, after a wait that named none. Linux
# wakes one worker for each connection, and one woken that leaves before it accepts (a stop's
# signal came with the wakeup, or it was killed) would leave the connection to wait for the
# next one's wakeup: an idle worker looks once a second, as its wait ends. Not one that stops
# or reopens its logs (one that gave up root leaves for that, and its successor takes it).
sub _left_ready ($self) {
    return if ${$self->{stopping}} || ${$self->{reopen}};
    my $waited = $self->{waited};
    my $rin    = '';
    vec($rin, fileno $_, 1) = 1 for @$waited;
    return if select(my $rout = $rin, undef, undef, 0) <= 0;
    for my $i (0 .. $#$waited) { return $i if vec($rout, fileno $waited->[$i], 1) }
    return;
}

# A parked connection whose next request is arriving (Perennial::Park): taken unless another
# worker took it first, and served as one just accepted, with what it had on it
sub _resume ($self) {
    my ($sock, $state) = $self->{park}->take or return ();
    my $index = $state->{listener};
    if (!$self->{listeners}[$index]) {    # Cannot happen unless the listeners changed
        $self->{log}->error("a parked connection came back for listener $index, which is gone");
        return ();
    }
    return ($sock, $index, peer_of($sock), $state);
}

# Running out of descriptors must not spin the worker: say so and pause a little
sub _accept_failed ($self) {
    $self->{log}->error("Can't accept a connection: $!");
    Time::HiRes::sleep(0.1);
}

# A request's environment as the listener gives it; with ServerName's name and port, where it is
# set, which a script's SERVER_NAME is when the request has no Host and its SERVER_PORT when Host
# names no port (Perennial::ErrorPage::server_of)
sub _base_env ($listener, $named = undef, $named_port = undef) {
    my ($host, $port) = $listener->port ? ($listener->host, $listener->port) : ($listener->name, 0);
    return {
        (length($named // '') ? ('perennial.server_name' => $named)      : ()),
        (defined $named_port  ? ('perennial.server_port' => $named_port) : ()),
        'psgi.version'         => [1, 1],
        'psgi.url_scheme'      => 'http',
        'psgi.errors'          => \*STDERR,
        'psgi.multithread'     => '',
        'psgi.multiprocess'    => 1,
        'psgi.run_once'        => '',
        'psgi.nonblocking'     => '',
        'psgi.streaming'       => 1,
        'psgix.input.buffered' => 1,
        'psgix.harakiri'       => 1,
        'psgix.cleanup'        => 1,
        SERVER_NAME            => $host,
        SERVER_PORT            => $port,
        SCRIPT_NAME            => '',
    };
}

1;

__END__

=head1 NAME

Perennial::Server - a worker's accept loop

=head1 SYNOPSIS

    my $server = Perennial::Server->new(config => $config, log => $log, board => $board,
        app => $app, listeners => \@listeners);
    $server->serve({slot => 0, stopping => \my $stop, max_requests => undef});

=head1 DESCRIPTION

Accepts connections on the listeners inherited from the manager and serves each one with
L<Perennial::Connection>, updating the worker's scoreboard slot (C<_> while waiting). Each
worker waits on an epoll instance of its own (L<Perennial::HTTP::Core>'s C<waiter>: in C, or
Linux::Epoll's in Perl) in which the listeners are exclusive: Linux wakes one waiting worker for
a new connection, the first to have made its epoll, so light load stays on the workers whose
caches are warm, and no other worker wakes to find the connection taken. An idle worker also
looks at the listeners once a second, as its wait ends, for a connection that a worker woken
for it left (one that stopped or was killed before it accepted). Without an epoll (a worker
that could not make one), the listeners are watched with C<select>. The listening sockets are
made non-blocking once, in the manager, as the server is made.
The loop ends when the
worker's stop flag is set, when the application asks with C<psgix.harakiri.commit>, or after
the worker's request limit.

With the C functions built and the epoll made, the waiting, accepting and serving is done by
the accept loop in C (F<xs/Loop.c>, C<xs_serve_connections>) for as long as nothing is due
here: a stop, a reopen of the logs, the worker's memory to publish, the request limit, an exit
asked for, a second without a connection, or a connection that is the Perl's to take (on a Unix
listener, a parked one coming back, an accept that failed). The C returns the requests it
served, and this loop does what is due, takes the connection when it is its own, and calls it
again.

=head1 METHODS

=head2 new

    my $server = Perennial::Server->new(%args);

Takes C<config>, C<log>, C<board>, C<app> and C<listeners>; C<park> (the parking process),
and C<watch_files> (true for a site whose URLs may map to scripts: each worker then watches
the scripts it serves, L<Perennial::FileWatch>).

=head2 serve

    $server->serve($worker);

Runs the worker's accept loop; C<$worker> has C<slot>, C<stopping> (a reference to a flag)
and C<max_requests> (undef for no limit).

=cut
