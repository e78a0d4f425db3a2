package Perennial::Status;
use v5.36;
use Carp                      qw(croak);
use JSON::PP                  ();
use Perennial::HTTP::Response qw(plain_response);
use Perennial::Status::HTML;
use Perennial::Status::Proc;
use Perennial::Status::Report qw(apache_time duration_words summary);

# SetHandler server-status: the scoreboard as mod_status shows it (HTML, ?refresh=N), as its
# machine-readable ?auto text (same keys, same format, so monitoring written for Apache reads
# it), as JSON (?json) and as Prometheus metrics (?metrics or /metrics below the location).
# The page is made by the worker that serves it, from the shared scoreboard.

my %SCOREBOARD_LABEL = (
    '_' => 'waiting',
    S   => 'starting',
    R   => 'reading',
    W   => 'sending',
    K   => 'keepalive',
    D   => 'dns',
    C   => 'closing',
    L   => 'logging',
    G   => 'graceful',
    I   => 'idle_cleanup',
    '.' => 'open',
);

# server: a hash the runner fills in before workers start (board, listeners)
sub new ($class, %args) {
    my $server = $args{server} or croak 'server is required';
    return bless {server => $server}, $class;
}

# A whole response that no cache keeps; Content-Type text/plain unless given
sub response ($status, $body, @headers) {
    return plain_response($status, $body, @headers, 'Cache-Control' => 'no-store');
}

sub to_app ($self) {
    return sub ($env) {
        my $method = $env->{REQUEST_METHOD};
        return response(405, "Method Not Allowed\n", Allow => 'GET, HEAD')
            unless $method eq 'GET' || $method eq 'HEAD';
        my $board = $self->{server}{board}
            or return response(503, "The scoreboard is not ready\n");
        my %query = _query($env->{QUERY_STRING});
        my $path  = $env->{PATH_INFO} // '';
        return response(404, "Not Found\n") if length $path && $path ne '/' && $path ne '/metrics';
        my $queues = Perennial::Status::Proc::queue_of_sockets(@{$self->{server}{listeners} // []});

        # Memory (smaps, about 170 us a worker) for every view but ?auto, which monitoring polls
        my $s = summary($board, queues => $queues, memory => !exists $query{auto});
        return _metrics($s)    if exists $query{metrics} || $path eq '/metrics';
        return _auto($env, $s) if exists $query{auto};
        return _json($s)       if exists $query{json};
        my $refresh = $query{refresh};
        $refresh = 1 if defined $refresh && $refresh !~ /\A[1-9]\d{0,4}\z/;
        my $html = Perennial::Status::HTML::page($s, $env, $refresh);
        return response(
            200, $html,
            'Content-Type' => 'text/html; charset=UTF-8',
            defined $refresh ? (Refresh => $refresh) : ()
        );
    };
}

# mod_status's ?auto: the server name, then "Key: value" lines in Apache 2.4's order, with
# Apache's number formats (%g, no leading zero)
sub _auto ($env, $s) {
    my $up   = $s->{uptime} > 0 ? $s->{uptime} : 1;
    my $acc  = $s->{accesses};
    my $cpu  = $s->{cpu};
    my $load = $cpu->{user} + $cpu->{system} + $cpu->{children_user} + $cpu->{children_system};
    my ($depth, $limit) = _queue_totals($s->{queues});
    my @lines = (
        $env->{SERVER_NAME} // 'localhost',
        "ServerVersion: $s->{server_version}",
        "ServerMPM: $s->{mpm}",
        'CurrentTime: ' . apache_time($s->{now}),
        'RestartTime: ' . apache_time($s->{started}),
        "ParentServerConfigGeneration: $s->{generation}",
        'ParentServerMPMGeneration: ' . ($s->{generation} - 1),
        'ServerUptimeSeconds: ' . int($s->{uptime}),
        'ServerUptime: ' . duration_words($s->{uptime}),
        (   map { "Load$_->[0]: " . sprintf('%.2f', $s->{load}[$_->[1]] // 0) } [1, 0],
            [5, 1], [15, 2]
        ),
        "Total Accesses: $acc",
        'Total kBytes: ' . int($s->{bytes} / 1024),
        'Total Duration: ' . int($s->{micros} / 1000),
        (   map { "CPU$_->[0]: " . _g($cpu->{$_->[1]}) } ['User', 'user'],
            ['System',         'system'],
            ['ChildrenUser',   'children_user'],
            ['ChildrenSystem', 'children_system']
        ),
        'CPULoad: ' . _g($load / $up * 100),
        'Uptime: ' . int($s->{uptime}),
        'ReqPerSec: ' . _g($acc / $up),
        'BytesPerSec: ' . _g($s->{bytes} / $up),
        'BytesPerReq: ' . _g($acc    ? $s->{bytes} / $acc         : 0),
        'DurationPerReq: ' . _g($acc ? $s->{micros} / 1000 / $acc : 0),
        "BusyWorkers: $s->{busy}",
        "GracefulWorkers: $s->{graceful}",
        "IdleWorkers: $s->{idle}",
        "ParkedConnections: $s->{parked}",
        "ParkedSpoolBytes: $s->{spooled}",
        "Processes: $s->{processes}",
        (defined $depth ? ("ListenQueue: $depth", "ListenQueueLimit: $limit") : ()),
        "Scoreboard: $s->{scoreboard}",
    );
    return response(200, join("\n", @lines) . "\n",
        'Content-Type' => 'text/plain; charset=ISO-8859-1');
}

sub _json ($s) {
    my %out = %$s;
    $out{duration_ms} = int(delete($out{micros}) / 1000);
    $out{workers}     = [map { _worker_json($_) } @{$s->{workers}}];
    my $body = JSON::PP->new->canonical->ascii->encode(\%out);
    return response(200, $body, 'Content-Type' => 'application/json');
}

sub _worker_json ($w) {
    my %w = map { $_ => $w->{$_} }
        qw(slot pid generation state requests conn_requests slot_requests bytes slot_bytes client
        vhost request started cpu memory);
    $w{last_ms}      = $w->{last_micros} / 1000;
    $w{seconds_busy} = $w->{since} if $w->{state} ne '_' && defined $w->{since};
    return \%w;
}

# The Prometheus text format (version 0.0.4): the same figures, and each worker's memory
sub _metrics ($s) {
    my $out = '';
    my $add = sub ($name, $type, $help, @samples) {
        $out .= "# HELP perennial_$name $help\n# TYPE perennial_$name $type\n";
        while (my ($labels, $value) = splice @samples, 0, 2) {
            next unless defined $value;
            my $l = join ',', map { "$_->[0]=\"" . _label($_->[1]) . '"' } @$labels;
            $out .= "perennial_$name" . (length $l ? "{$l}" : '') . " $value\n";
        }
    };
    $add->(info           => 'gauge',   'Server version', [[version => $s->{server_version}]], 1);
    $add->(uptime_seconds => 'gauge',   'Seconds since the manager started', [], $s->{uptime});
    $add->(generation     => 'gauge',   'Restarts so far, plus one',         [], $s->{generation});
    $add->(accesses_total => 'counter', 'Requests served',                   [], $s->{accesses});
    $add->(sent_bytes_total => 'counter', 'Bytes of responses sent',         [], $s->{bytes});
    $add->(
        request_duration_seconds_total => 'counter',
        'Time spent serving requests', [], $s->{micros} / 1e6
    );
    $add->(
        cpu_seconds_total => 'counter',
        'CPU time of the manager and its workers',
        map { ([[mode => $_]], $s->{cpu}{$_}) } qw(user system children_user children_system)
    );
    $add->(
        workers => 'gauge',
        'Workers by activity',
        map { ([[state => $_]], $s->{$_}) } qw(busy idle graceful)
    );
    $add->(processes => 'gauge', 'Worker processes', [], $s->{processes});
    $add->(
        scoreboard => 'gauge',
        'Scoreboard slots by state',
        map { ([[state => $SCOREBOARD_LABEL{$_}]], $s->{states}{$_} // 0) }
            sort keys %SCOREBOARD_LABEL
    );
    $add->(
        listen_queue => 'gauge',
        'Connections waiting to be accepted',
        map { ([[listener => $_->{listener}]], $_->{depth}) } @{$s->{queues}}
    );
    $add->(
        listen_queue_limit => 'gauge',
        'Listen backlog limit',
        map { ([[listener => $_->{listener}]], $_->{limit}) } @{$s->{queues}}
    );
    my @w  = @{$s->{workers}};
    my @id = map { [[slot => $_->{slot}], [pid => $_->{pid}]] } @w;
    $add->(
        worker_requests_total => 'counter',
        'Requests served by each worker',
        map { ([@{$id[$_]}], $w[$_]{requests}) } 0 .. $#w
    );
    $add->(
        worker_cpu_seconds_total => 'counter',
        'CPU time of each worker',
        map {
            my $i = $_;
            map { ([@{$id[$i]}, [mode => $_]], $w[$i]{cpu}{$_}) } qw(user system)
            }
            grep { $w[$_]{cpu} } 0 .. $#w
    );
    $add->(
        worker_memory_bytes => 'gauge',
        'Memory of each worker (from smaps_rollup)',
        map {
            my $i = $_;
            map { ([@{$id[$i]}, [kind => $_]], $w[$i]{memory}{$_} * 1024) }
                qw(rss pss shared private)
            }
            grep { $w[$_]{memory} } 0 .. $#w
    );
    return response(200, $out, 'Content-Type' => 'text/plain; version=0.0.4; charset=utf-8');
}

# Apache prints its ratios with %g and without the leading zero
sub _g ($n) { sprintf('%g', $n) =~ s/\A0\./\./r }

sub _label ($value) { ($value // '') =~ s/(["\\])/\\$1/gr =~ s/\n/\\n/gr }

sub _query ($qs) {
    return () unless length($qs // '');
    return map { my ($k, $v) = split /=/, $_, 2; ($k => $v) } grep {length} split /[&;]/, $qs;
}

# All TCP listeners together: what is waiting, out of what the kernel allows
sub _queue_totals ($queues) {
    my @known = grep { defined $_->{depth} } @$queues or return;
    my ($depth, $limit) = (0, 0);
    for my $q (@known) { $depth += $q->{depth}; $limit += $q->{limit} // 0 }
    return ($depth, $limit);
}

1;

__END__

=head1 NAME

Perennial::Status - the server-status page: HTML, Apache's ?auto, JSON and Prometheus

=head1 SYNOPSIS

    <Location /server-status>
        SetHandler server-status
        Require local
    </Location>

    curl http://127.0.0.1:8529/server-status?auto
    curl http://127.0.0.1:8529/server-status/metrics

=head1 DESCRIPTION

What Apache's mod_status shows, from Perennial's scoreboard: C</server-status> is the HTML
page (C<?refresh=N> reloads it every N seconds), C<?auto> the machine-readable text with
Apache 2.4's keys, C<?json> the same figures with every worker as JSON, and C<?metrics> (or
C</metrics> below the location) the Prometheus text format with each worker's memory. The
location answers only clients on this host unless it has its own C<Require> lines. See
L<Perennial::Manual::Status> for every figure.

=head1 METHODS

=head2 new

    my $status = Perennial::Status->new(server => $server);

C<server> is a hash that holds C<board> (the L<Perennial::Scoreboard>) and C<listeners> by the
time a request comes.

=head2 response

    return Perennial::Status::response(200, $json, 'Content-Type' => 'application/json');

A finished PSGI response with its length, not to be cached; C<text/plain> unless a type is
given.

=head2 to_app

    my $app = $status->to_app;

=cut
