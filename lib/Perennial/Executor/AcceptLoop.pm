package Perennial::Executor::AcceptLoop;
use v5.36;
use Socket   qw(AF_UNIX PF_UNSPEC SOCK_STREAM);
use Storable ();
use Perennial::Executor::Environment;
use Perennial::Executor::Exit;
use Perennial::Executor::Layers;

# FastCGI accept loops (`while (my $q = CGI::Fast->new) { ... }`, `while ($req->Accept >= 0)`,
# as SmokePing and munin's CGI are written) in a resident script. The first Accept of a request
# is that request: the CGI environment, STDIN and STDOUT are already its own. The second means
# the turn is over and the loop wants the next request, with everything it holds (the lexicals
# set before the loop, caches) kept, as under FastCGI: the worker forks there. The worker ends
# the request as if the script had exited; the copy, the loop process, waits inside that Accept
# for the next request for the script, which the worker sends it over a socket pair, and sends
# back what each turn prints. A request that the loop process cannot take (it exited or died)
# starts the script again from the top. Under PerlRun, which starts every request afresh,
# the second Accept ends the request, and each request is the first turn of a new loop.

my $REAL;     # FCGI's own Accept, for code that is not a resident script (0: no FCGI)
our $LOOP;    # In a loop process: its socket to the worker

# Once per process: FCGI, when it is installed, has its Accept replaced
sub watch ($class) {
    return if defined $REAL;                                # Done, or FCGI is not installed (0)
    my %was = map { $_ => $SIG{$_} } qw(TERM USR1 PIPE);    # libfcgi takes them as it loads
    my $ok  = eval { require FCGI; 1 };
    for my $name (keys %was) {
        $SIG{$name} = $was{$name} // 'DEFAULT';  ## no critic (RequireLocalizedPunctuationVars) back
    }
    $REAL = $ok ? \&FCGI::Accept : 0;
    return unless $REAL;
    no warnings 'redefine';    ## no critic (ProhibitNoWarnings) replacing an XS sub on purpose
    *FCGI::Accept = \&_accept;
    return;
}

sub _accept : prototype($) ($request) {
    return _next_turn(1) if $LOOP;
    my $out = Perennial::Executor::Output::on_stdout();
    return $REAL->($request) unless $out && $Perennial::Executor::Exit::IN_REQUEST == $$;
    return 0           if !$out->{accepted}++;    # The first: the request running
    return _fork($out) if $out->{keep_loop};
    Perennial::Executor::Exit->end_request;       # PerlRun starts every request afresh
}

# The worker keeps one end of the pair (in $out->{loop} until the executor takes it) and ends
# the request; the loop process waits for the next one
sub _fork ($out) {
    socketpair(my $worker, my $loop, AF_UNIX, SOCK_STREAM, PF_UNSPEC)
        or die "Can't make a socket pair for the script's accept loop: $!\n";
    my $pid = do {
        local $Perennial::Executor::Children::RUNNING;    # Not a child of the script's own
        fork // die "Can't fork the script's accept loop: $!\n";
    };
    if ($pid) {
        close $loop;
        $worker->autoflush(1);
        $out->{loop} = {pid => $pid, sock => $worker};
        Perennial::Executor::Exit->end_request;
    }
    close $worker;
    alarm 0;
    Perennial::Server->leave_in_fork if $INC{'Perennial/Server.pm'};

    # A process of its own now: the worker's signal handlers and name are not its
    my @signals = qw(TERM INT HUP USR1 USR2 ALRM CHLD PIPE);
    @SIG{@signals} = ('DEFAULT') x @signals; ## no critic (RequireLocalizedPunctuationVars) for good
    $0 = "perennial accept loop: $0";        ## no critic (RequireLocalizedPunctuationVars) for good
    $loop->autoflush(1);

    my @layers = ($out->stdout_layers, (tied(*STDERR) // {})->{layers});    # The script's, kept
    $out->close;    # The worker's response: nothing of this process reaches it
    {
        no warnings 'untie';    ## no critic (ProhibitNoWarnings) the worker's objects stay behind
        untie *STDOUT;
        untie *STDERR;
    }
    CORE::close(*STDOUT);
    tie *STDOUT, __PACKAGE__ . '::Stream', $loop, 'O', $layers[0];
    tie *STDERR, __PACKAGE__ . '::Stream', $loop, 'E', $layers[1];
    $LOOP = $loop;

    # A process of its own, as a FastCGI one: a CGI.pm loaded with MOD_PERL set reads each
    # turn's CGI variables and STDIN, not the first request's object (gone with its response)
    ## no critic (ProhibitPackageVars RequireLocalizedPunctuationVars) for good, in this process
    $CGI::MOD_PERL = 0 if $CGI::MOD_PERL;
    undef $Perennial::Executor::CGIWraps::PLAIN;
    ## use critic
    return _next_turn(0);
}

# In the loop process: the end of the turn that ended, if one did, goes to the worker; the next
# request, when it comes, becomes the CGI environment and STDIN; -1 (the loop ends) when the
# worker is gone
sub _next_turn ($ended) {
    return -1 if $ended && !send_frame($LOOP, 'D', '');
    my ($type, $frame) = read_frame($LOOP);
    return -1 unless defined $type && $type eq 'R';
    my $request = Storable::thaw($frame);
    Perennial::Executor::Environment->apply($request->{env});
    open(my $in, '<', \$request->{body}) or return -1;
    *STDIN = $in;    ## no critic (RequireLocalizedPunctuationVars) the turn's, until the next

    # CGI.pm's globals afresh, as before each resident request: a turn's CGI->new (a plain FCGI
    # loop's; CGI::Fast resets them itself) would otherwise take the last turn's query
    CGI::initialize_globals() if defined &CGI::initialize_globals;
    return 0;
}

# In the worker: one request through the loop process, with its CGI environment (as the
# executor's Environment groups it) and body. $out takes what the turn prints, $errors what it
# writes to STDERR. False when the loop process was gone before it took the request (which
# then runs as usual, and the loop starts again); a loop process that ends during a turn has
# ended the turn, as a CGI process that exits.
sub forward ($class, $loop, $out, $errors, $env, $body) {
    my $sock = $loop->{sock};
    my $sent = send_frame($sock, 'R', Storable::nfreeze({env => $env, body => $body}));
    my $got  = 0;
    while ($sent && (my ($type, $data) = read_frame($sock))) {
        return 1 if $type eq 'D';
        $got = 1;
        $type eq 'O' ? $out->add($data) : $errors->take($data);
    }
    $class->retire($loop);
    return $got;
}

# The loop process goes, as mod_fcgid ends one: its socket closes, then TERM
sub retire ($class, $loop) {
    return if $loop->{gone}++;
    close $loop->{sock};
    kill 'TERM', $loop->{pid};
    waitpid $loop->{pid}, 0;
    return;
}

# Frames: a type (R request, O output, E error output, D turn done), a length, the bytes. The
# handles flush at once, and print and read go on until every byte is through.
sub send_frame ($sock, $type, $data) { print {$sock} pack('a1 N/a*', $type, $data) }

sub read_frame ($sock) {
    (read($sock, my $head, 5) // 0) == 5 or return;
    my ($type, $length) = unpack 'a1 N', $head;
    (read($sock, my $data, $length) // 0) == $length or return;
    return ($type, $data);
}

# STDOUT and STDERR of a turn in the loop process: frames to the worker
package Perennial::Executor::AcceptLoop::Stream;    ## no critic (ProhibitMultiplePackages)

# The layers the script's handles had (at compile time and in its first turn) stay with it
sub TIEHANDLE ($class, $sock, $type, $layers) {
    bless {sock => $sock, type => $type, layers => $layers}, $class;
}
sub CLOSE  ($self) {1}
sub FILENO ($self) {undef}

# binmode: the layers' bytes go to the worker (Perennial::Executor::Layers)
sub BINMODE ($self, @layer) {
    ($self->{layers} //= Perennial::Executor::Layers->new)->push_layers(@layer);
}

sub PRINT ($self, @list) {
    my $text = join($, // '', @list) . ($\ // '');
    return Perennial::Executor::AcceptLoop::send_frame($self->{sock}, $self->{type},
        Perennial::Executor::Layers::bytes_of($self->{layers}, $text));
}

# printf and syswrite as print, as the compile-time stand-in has them
*PRINTF = \&Perennial::Executor::Layers::PRINTF;
*WRITE  = \&Perennial::Executor::Layers::WRITE;

1;

__END__

=head1 NAME

Perennial::Executor::AcceptLoop - CGI::Fast and FCGI accept loops in a resident script

=head1 SYNOPSIS

    Perennial::Executor::AcceptLoop->watch;    # once per process, before scripts run
    # after a script ran: a loop process to send its next requests to
    my $loop = delete $out->{loop};
    Perennial::Executor::AcceptLoop->forward($loop, $out, $errors, \%cgi_env, $body)
        or run_the_script_again();

=head1 DESCRIPTION

A script written for FastCGI answers one request per turn of its accept loop and keeps its
state between turns. Under PerlRun and Registry the first turn runs in the worker; at the
second Accept the worker forks, ends the request, and from then on sends the script's requests
to that loop process, one turn each, until the script changes, the loop ends, or the worker
exits. Each worker has its own loop process per such script.

=cut
