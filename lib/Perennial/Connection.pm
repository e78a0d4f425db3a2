package Perennial::Connection;
use v5.36;
use Time::HiRes                  ();
use Perennial::ErrorText         qw(error_text);
use Perennial::HTTP::Close       qw(close_connection);
use Perennial::HTTP::Core        ();
use Perennial::HTTP::Input       qw(empty_input);
use Perennial::HTTP::ReadTimeout qw(read_timeouts);
use Perennial::HTTP::Refused     qw(request_of);
use Perennial::HTTP::Response    ();
use Perennial::HTTP::Spool       ();
use Perennial::Connection::Parking;
use Perennial::Connection::Reads;
use parent -norequire, 'Perennial::Connection::Reads', 'Perennial::Connection::Parking';

# The hot path: one connection, its requests one after another (read, parse, call the app,
# write, keep alive). Kept small and behind a narrow interface, new() and serve(), so that it
# can be replaced by a faster implementation without touching the rest. Reading a request's
# head and body is Perennial::Connection::Reads's; the keep-alive wait and what goes to the
# parking process, Perennial::Connection::Parking's.

# The usual requests are served by the loop in C (xs/Loop.c) when it was built, which calls
# back the methods below (and _still_idle) by name
my $LOOP_IN_C = Perennial::HTTP::Core::implementation() eq 'C';

# Answers the request the application is running with $status when nothing of the response
# went out yet, and logs it; false when no application is running in this process (a child it
# forked is not the worker). For a worker about to end itself: a request deadline, an exit.
sub abort_request ($self, $status) {
    return 0 if $$ != $self->{pid};
    my $c = $self->_in_app or return 0;
    _answer_instead($c, $status);
    my $micros = int((Time::HiRes::time() - $c->{t0}) * 1e6);
    ($c->{env}{'perennial.log'} // $self->{log})
        ->access($c->{env}, $c->{status}, $c->{bytes}, $micros, $c);
    return 1;
}

# The socket of the request the application is running, if one is
sub client_socket ($self) {
    my $c = $self->_in_app;
    return $c && $c->{sock};
}

# The response object of the request the application is running: the loop in C's (made only
# when asked, xs_current_response), or the Perl loop's; the loop in C leaves its own there too
# when an exit cuts its request short (END blocks run after the C has gone)
sub _in_app ($self) {
    return ($LOOP_IN_C ? Perennial::HTTP::Core::xs_current_response() : undef) // $self->{in_app};
}

# What a worker's connections are served by, from the configuration: the keep-alive and parking
# settings, and a request's limits on each listener (its HttpProtocolOptions, the Host values
# judged on them, its read timeouts). Made once, in the manager, with the Server: made in each
# worker, the configuration's accessors and these hashes copied pages it shares with the manager
# (bench/pages.pl --from-fork); a worker writes to a copy of a page of them only where it
# judges a new Host value.
sub settings ($class, $config, $protocol = undef) {
    return {
        keep       => $config->keep_alive,
        keep_max   => $config->max_keep_alive_requests,
        keep_wait  => $config->keep_alive_timeout,
        park_heads => $config->park_slow_heads,
        park_wait  => $config->park_keep_alive_after,
        timeout    => $config->timeout,
        allow      => 'GET, HEAD, POST, OPTIONS' . ($config->trace_enable ? ', TRACE' : ''),
        limits_of  => _limits_of($config, $protocol // [$config->http_protocol_options]),

        # ParkSpoolLimit in bytes, when a slow reader's rest is spooled
        spool_limit => $config->park_slow_readers ? $config->park_spool_limit * 1024 : undef,
    };
}

sub _limits_of ($config, $protocol) {
    my %limits = (
        line       => $config->limit_request_line,
        fields     => $config->limit_request_fields,
        field_size => $config->limit_request_field_size,
        body       => $config->limit_request_body,
    );
    return [
        map {
            +{  %limits,
                unsafe        => $_->{unsafe}        // 0,
                registered    => $_->{registered}    // 0,
                merge_slashes => $_->{merge_slashes} // 0,    # MergeSlashes (listener_options)
                read          => $_->{read_timeout} // read_timeouts($config->request_read_timeout),
                hosts         => $_->{hosts}        // {}   # The Host values judged on these limits
            }
        } @$protocol
    ];
}

sub new ($class, %args) {
    my $settings = $args{settings} // $class->settings($args{config}, $args{protocol});
    my $self     = bless {
        %$settings,
        pid        => $$,                     # The worker's (not a process the application forks)
        after      => $args{after_request},
        size_limit => $args{size_limit},      # Its counts and limits, which the loop in C reads
        app        => $args{app},
        log        => $args{log},
        board      => $args{board},
        slot       => $args{slot},
        stopping   => $args{stopping},
        park       => $args{park},            # Perennial::Park, when idle ones go
        log_of     => $args{log_of},          # The logs of a refused request's virtual host
        files      => $args{files},    # Perennial::FileWatch: the loop in C gives it to requests
    }, $class;

    # What a slow reader has not taken of a response is spooled, and goes to the parking process
    # with the connection (hand_rest)
    if ($args{park} && defined $settings->{spool_limit}) {
        $self->{spooling} = 1;
        Perennial::HTTP::Spool::limit($args{board}, $settings->{spool_limit});
    }
    return $self;
}

# Serves requests on $sock until it closes or is parked; returns the number of requests served.
# $listener is the index of the listener it came on (its HttpProtocolOptions); $resumed, the
# state of a connection that comes back from the parking process (Perennial::Park).
sub serve ($self, $sock, $base, $peer, $remaining, $listener = 0, $resumed = undef) {
    $self->{limits} = $self->{limits_of}[$listener] // $self->{limits_of}[0];
    my ($buf, $served) = $resumed ? @$resumed{qw(buffer served)} : ('', 0);
    $self->{listener} = $listener;
    my $began = $resumed && $self->resumed($resumed);
    my $now   = $self->_requests($sock, \$buf, $base, $peer, $remaining, $served, $began);
    $self->_end_connection($sock, \$buf, $now);
    return $now - $served;
}

# The rest of a connection the worker's accept loop in C began (xs/Loop.c): the request it gave
# to the Perl (@begun: its time, the bytes in the buffer, its head's length and environment when
# it read the head), the requests after it, and the connection's end; the number served on it
sub serve_rest ($self, $sock, $buf_ref, $base, $peer, $remaining, $served, @begun) {
    my $now = $self->_requests($sock, $buf_ref, $base, $peer, $remaining, $served, \@begun);
    $self->_end_connection($sock, $buf_ref, $now);
    return $now;
}

# A connection's end, $served requests on it: closed, lingering when requests may still be on
# their way, or let go when it went to the parking process
sub _end_connection ($self, $sock, $buf_ref, $served) {
    $self->{board}->state($self->{slot}, 'C');
    delete $self->{head_back};
    if (delete $self->{parked}) { CORE::close($sock) }
    else { close_connection($sock, length $$buf_ref, $served, delete $self->{linger}) }
    return;
}

sub wants_exit ($self) { $self->{harakiri} }

# The requests of a connection, one after another, $served of them before; the count after.
# The usual ones are served by the loop in C (xs/Loop.c), which gives a request back here where
# it is Perl's: before its head was read (with what the read returned), or with the head read.
sub _requests ($self, $sock, $buf_ref, $base, $peer, $remaining, $served, $began) {
    my ($board, $slot) = @$self{qw(board slot)};
    while (1) {
        my ($len, $status, $env, $n, $t0);
        if ($LOOP_IN_C && !defined $began && !$self->{late_head}) {
            ($served, $remaining, $t0, $n, $len, $env)
                = Perennial::HTTP::Core::xs_serve_plain($self, $sock, $buf_ref, $base, $peer,
                $served, $remaining);
            return $served if !defined $t0;    # Closed, lingering or parked
        }
        else {
            ($t0, $n, $len, $env) = $self->begin_request($sock, $buf_ref, $base, $peer, $began);
            undef $began;
        }
        ($len, $status, $env) = $self->read_head($sock, $buf_ref, $base, $peer, $t0, $served, $n)
            unless $len;
        last unless $env;
        $board->request_start($slot, $env, $t0, $served++);
        my $c;
        if ($status) {
            $c = Perennial::HTTP::Response->for_request($sock, $env, $t0, $self->{timeout},
                $self->{spooling}, 0);
            $self->_refuse($c, $status, $env, 'bad request');
        }
        else {
            substr $$buf_ref, 0, $len, '';
            $env->{'perennial.head_bytes'} = $len;
            $remaining-- if defined $remaining;
            $c = $self->_answer($sock, $buf_ref, $env, $t0, $served, $remaining);
        }
        last if !$self->_after_response($c, $env, $t0, $served, length $$buf_ref);
        last if !length $$buf_ref && !$self->next_request($sock, $served);
    }
    return $served;
}

# A request whose head was good: its response (returned), which says whether the connection may
# stay open after it (what HTTP and the configuration allow); its body when it has one (a length
# or a Transfer-Encoding; most requests have neither), then the application
sub _answer ($self, $sock, $buf_ref, $env, $t0, $served, $remaining) {

    # HTTP/1.1 keeps the connection unless the client says close, HTTP/1.0 only when it asks;
    # neither past MaxKeepAliveRequests, the worker's last request, or a stop
    my $conn = $env->{HTTP_CONNECTION};
    my $wanted
        = $env->{SERVER_PROTOCOL} eq 'HTTP/1.1'
        ? !defined $conn || $conn !~ /\bclose\b/i
        : defined $conn && $conn  =~ /\bkeep-alive\b/i;
    my $c = Perennial::HTTP::Response->for_request(
        $sock, $env, $t0,
        $self->{timeout},
        $self->{spooling},
        (          $wanted
                && $self->{keep}
                && !${$self->{stopping}}
                && !(defined $remaining && $remaining <= 0)
                && !($self->{keep_max}  && $served >= $self->{keep_max}) ? 1 : 0
        )
    );
    my $has_body = defined $env->{CONTENT_LENGTH} || defined $env->{HTTP_TRANSFER_ENCODING};
    return $c if $has_body && !$self->read_body($c, $buf_ref, $env);
    $env->{'psgi.input'} //= ($self->{empty_input} //= $self->_empty_input);
    $self->_call_app($c, $env);
    return $c;
}

# After a response: the scoreboard's counts, the access log line, what the application left to
# run after it; whether to wait on the connection for the next request. That is when keep-alive
# was promised; an application that asked the worker to exit (psgix.harakiri) had it promised:
# a request may already be on its way, so the connection is closed lingering. (A worker told to
# stop still serves the next request of a kept-alive connection, with Connection: close, so none
# is lost.) $pipelined: the bytes of the requests after it already read.
sub _after_response ($self, $c, $env, $t0, $served, $pipelined = 0) {
    $self->hand_rest($c, $served, $pipelined) if $c->{spool};    # What a slow reader has not taken
    my $micros = int((Time::HiRes::time() - $t0) * 1e6);
    $self->{board}->request_done($self->{slot}, $c->{bytes}, $micros, $served);
    $self->{log}->info("response cut short, $c->{broken} (" . request_of($env) . ')')
        if $c->{too_slow};
    $self->{log}->info('a slow reader\'s rest did not fit in a spool (64 MB each, ParkSpoolLimit '
            . 'in all): its worker wrote it itself ('
            . request_of($env) . ')')
        if $c->{spool_full};

    # No call at all for a log with no access log (its own list of them, read where it lies)
    my $log = $env->{'perennial.log'} // $self->{log};
    $log->access($env, $c->{status} // 0, $c->{bytes}, $micros, $c) if $log->{access};
    $self->_cleanups($c, $env) if $env->{'psgix.cleanup.handlers'};

    # The empty input, kept while it still is one: not after a request closed it, reopened it on
    # something else (a script's STDIN is its IO) or tied it
    delete $self->{empty_input}
        if $self->{empty_input}
        && (Internals::SvREFCNT(${$self->{empty_string}}) != 2 || tied *{$self->{empty_input}});
    $self->{harakiri} = 1
        if $env->{'psgix.harakiri.commit'} || ($self->{after} && $self->{after}->());
    return 0 if !$c->{keep_alive};
    return 1 if !$self->{harakiri};
    $self->{linger} = 1;
    return 0;
}

# The connection's empty input, made if it has none (the loop in C asks, xs/Loop.c)
sub keep_empty_input ($self) {
    $self->{empty_input} //= $self->_empty_input;
    return;
}

# A new empty input for requests without a body, kept with the string it reads
sub _empty_input ($self) {
    (my $in, $self->{empty_string}) = empty_input();
    return $in;
}

# psgix.cleanup: what the application left to run once the response is sent and logged (mod_perl
# handlers' log and cleanup phases); one that dies is logged, and the others still run
sub _cleanups ($self, $c, $env) {

    # A connection that ends with this response ends for the client first, or a response framed
    # by that end would wait for them (a CGI script's standard error, read for up to Timeout);
    # not one handed to the parking process, which writes its rest
    shutdown($c->{sock}, 1) if !$c->{keep_alive} && !$self->{parked};

    # The status sent is the request's from now on: mod_perl's $r->status in a cleanup says it
    # (a script's "Status:" header, an error page put in its place)
    $env->{'perennial.status'} = $c->{status} if $c->{status};
    $self->_cleanup($env, $_) for @{delete $env->{'psgix.cleanup.handlers'}};
    return;
}

# One handler. A `last`, `next` or `redo` in it outside a loop of its own ends it with that
# error instead of the list (the loop in C calls each on a stack of its own, where perl dies so)
sub _cleanup ($self, $env, $code) {
    my $done = 0;
    {
        last if $done;    # A redo in the handler comes back here
        $done = 1;
        eval { $code->($env); 1 } or $self->cleanup_failed($env, $@);
        return;
    }
    $self->cleanup_failed($env, q{Can't "last", "next" or "redo" outside a loop block});
    return;
}

# A cleanup handler that died, logged (by the Perl loop's _cleanups, or the loop in C's: xs/Loop.c)
sub cleanup_failed ($self, $env, $err) {
    $self->{log}
        ->error('cleanup handler died: ' . error_text($err) . " (request $env->{REQUEST_URI})");
    return;
}

# OPTIONS * asks about the server, not a resource: no application is asked, as in Apache
sub _options_of_server ($self, $c) {
    $c->respond([200, ['Allow' => $self->{allow}, 'Content-Length' => 0], []]);
    return 1;
}

sub _call_app ($self, $c, $env) {
    return $self->_options_of_server($c) if $env->{REQUEST_URI} eq '*';
    $self->{in_app} = $c;    # For abort_request, while the application runs
    my $ok = eval {
        my $res = $self->{app}->($env);
        $self->_respond($c, $env, $res);
    };
    delete $self->{in_app};
    return $ok ? 1 : $self->_app_failed($c, $env, $@);
}

# The application's response written (in its eval): the virtual host that took it noted for the
# status pages (%v is the access log's), then its body, or the streaming interface. A responder
# kept and called after its request has ended refuses, as the loop in C's does (xs/Loop.c: it
# calls this for a response it does not write itself, and has a delayed response's responder
# of its own, xs/LoopDelayed.c).
sub _respond ($self, $c, $env, $res) {
    $self->{board}->set($self->{slot}, vhost => $env->{'perennial.vhost'})
        if defined $env->{'perennial.vhost'};
    if (ref $res eq 'CODE') {
        my ($writer, $live) = (undef, 1);
        my $called = eval {
            $res->(
                sub ($r) {
                    die "the application responded after its request had ended\n" unless $live;
                    if (defined $r->[2]) { $c->respond($r); return }
                    $c->start($r->[0], $r->[1]);
                    return $writer = $c;    # The response is its own writer
                }
            );
            1;
        };
        $live = 0;
        die $@ unless $called;
        $writer->close if $writer;
        die "the application's streaming callback returned without responding\n"
            unless $c->{status};
    }
    else { $c->respond($res) }
    return 1;
}

# An application that died, or its response did: the error log says so, and the client gets a
# 500 when nothing of the response went yet; the connection closes after it
sub _app_failed ($self, $c, $env, $error) {
    my $err = error_text($error);
    $self->{log}->error("app died: $err (request $env->{REQUEST_METHOD} $env->{REQUEST_URI})");
    $c->close_after;
    _answer_instead($c, 500);
    return 0;
}

# An error response in place of the application's, unless its head went out already (then
# all that can be done is to close)
sub _answer_instead ($c, $status) {
    return if $c->{status} && !exists $c->{head};
    $c->error($status);
}

1;

__END__

=head1 NAME

Perennial::Connection - serve the requests of one HTTP connection

=head1 SYNOPSIS

    my $conn = Perennial::Connection->new(config => $config, app => $app, log => $log,
        board => $board, slot => $slot, stopping => \$stopping);
    my $served = $conn->serve($socket, \%listener_env, {REMOTE_ADDR => $ip}, $left, $index);

=head1 DESCRIPTION

The per-connection loop: read and parse each request head, read its body (Content-Length or
chunked, with C<Expect: 100-continue>), call the PSGI application, write the response, log it,
and keep the connection for the next request when HTTP and the configuration allow. Bad input
gets its status (400, 408, 413, 414, 417, 431, 501, 505) and a log line and never reaches the
application. Time limits are the socket's own (set once on the listener), and the keep-alive
wait is one C<poll> (L<Perennial::HTTP::Core>'s C<ready>). A plain request head is read by
L<Perennial::HTTP::Core>'s C<parse_plain> when the C functions are built; any other by
L<Perennial::HTTP::Request>.

With the C functions built, the usual requests do not go through this Perl at all: the loop in
C (F<xs/Loop.c>, C<xs_serve_plain>) serves a plain head without a body whose application
answers with an array, or with a delayed response that gives a whole one (through a responder
in C, F<xs/LoopDelayed.c>), with the same scoreboard writes, keep-alive decision, response object
and access log line, and gives the rest back to this loop, where its methods do it as they do
without the C: a request with a body, any head but a plain one, a streaming or handle body,
an application that dies, a slow reader, cleanup handlers, a size limit, parking. Which
requests those are, and what the C saves (a kept-alive PSGI request in 63k instructions
instead of 109k), is in F<docs/design-notes.md>. Under C<PERENNIAL_PURE_PERL> this Perl serves
every request, and the tests run again on it (F<t/http/pure_perl.t>).


=head1 METHODS

=head2 abort_request

    $conn->abort_request(504);

From a signal handler or an END block in a worker that is about to exit: answers the request
the application is running with this status if its head has not gone out yet, and writes its
access-log line. Returns false when no application is running (or in a process it forked).

=head2 client_socket

    my $sock = $conn->client_socket;    # undef between requests

The socket of the request the application is running.

=head2 new

    my $conn = Perennial::Connection->new(%args);

Takes C<config>, C<app>, C<log>, C<board>, C<slot> and C<stopping> (a reference to the
worker's stop flag), and optionally C<after_request>, a code reference called after each
request: when it returns true, the worker ends after this connection; C<size_limit>, the
L<Perennial::SizeLimit> whose check C<after_request> makes (the loop in C then counts the
requests and reads the resident size itself, and calls C<after_request> with that size only
when a limit may be passed; the Perl loop calls it after each request, with nothing);
and C<settings>, what C<settings> makes of the configuration, or C<protocol>, the
HttpProtocolOptions of each listener (C<unsafe>, C<registered>) in the listeners' order, from
which C<new> makes them.

=head2 settings

    my $settings = Perennial::Connection->settings($config, \@listener_options);

What a worker's connections are served by, from the configuration: KeepAlive and its limits,
the parking settings, Timeout, the methods allowed, and the limits a request is read and judged
by, one hash for each listener (the request line and field limits, its HttpProtocolOptions,
MergeSlashes, the read timeouts and the Host values judged on them; the configuration's
HttpProtocolOptions when no listener's are given). The Server makes them in the manager, once,
for all its workers.

=head2 serve

    my $served = $conn->serve($socket, $listener_env, $peer_env, $remaining, $listener);

Serves the connection until it ends and returns the number of requests answered. Each request's
environment starts from the listener's keys and the connection's (client address, psgix.io);
neither hash is changed.
C<$remaining> (or undef) is how many more requests this worker may serve; C<$listener> the
index of the listener the connection came on (0 when left out).

=head2 keep_empty_input

    $conn->keep_empty_input;

For the loop in C (F<xs/Loop.c>): makes the connection's empty input (what a request without a
body reads as C<psgi.input>) if it has none, so that the loop serves the request itself.

=head2 serve_rest

    my $served = $conn->serve_rest($socket, \$buf, $listener_env, $peer_env, $remaining,
        $served_before, $t0, $bytes, $head_length, $env);

For the worker's accept loop in C (F<xs/Loop.c>): goes on with a connection it accepted, from
a request it leaves to the Perl (its time, the bytes in the buffer, and its head's length and
environment when it read the head), serves the rest of the connection and ends it; returns the
number of requests served on it in all.

=head2 wants_exit

    exit if $conn->wants_exit;

True after an application set C<psgix.harakiri.commit>.

=cut
