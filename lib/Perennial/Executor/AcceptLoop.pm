package Perennial::Executor::AcceptLoop;
use v5.36;
use Socket   qw(AF_UNIX PF_UNSPEC SOCK_STREAM);
use Storable ();
use Perennial::Executor::Exit;

# FastCGI accept loops (`while (my $q = CGI::Fast->new) { ... }`, `while ($req->Accept >= 0)`,
# as SmokePing and munin's CGI are written) in a resident script. The first Accept of a request
# is that request: the CGI environment, STDIN and STDOUT are already its own. The second means
# the turn is over and the loop wants the next request, with everything it holds (the lexicals
# set before the loop, caches) kept, as under FastCGI: the worker forks there. The worker ends
# the request as if the script had exited; the copy, the loop process, waits inside that Accept
# for the next request for the script, which the worker sends it over a socket pair, and sends
# back what each turn prints. A request that the loop process cannot take (it exited or died)
# starts the script again from the top.

my $REAL;     # FCGI's own Accept, for code that is not a resident script
our $LOOP;    # In a loop process: its socket to the worker

# Once per process: FCGI, when it is installed, has its Accept replaced
sub watch ($class) {
    return if $REAL;
    my %was = map { $_ => $SIG{$_} } qw(TERM USR1 PIPE);    # libfcgi takes them as it loads
    my $ok  = eval { require FCGI; 1 };
    for my $name (keys %was) {
        $SIG{$name} = $was{$name} // 'DEFAULT';  ## no critic (RequireLocalizedPunctuationVars) back
    }
    return unless $ok;
    $REAL = \&FCGI::Accept;
    no warnings 'redefine';    ## no critic (ProhibitNoWarnings) replacing an XS sub on purpose
    *FCGI::Accept = \&_accept;
    return;
}

sub _accept : prototype($) ($request) {
    return _next_turn() if $LOOP;
    my $out = tied *STDOUT;
    return $REAL->($request)
        unless ref $out eq 'Perennial::Executor::Output'
        && $Perennial::Executor::Exit::IN_REQUEST == $$;
    return 0 if !$out->{accepted}++;    # The first: the request running
    return _fork($out);
}

# The worker keeps one end of the pair (in $out->{loop} until the executor takes it) and ends
# the request; the loop process waits for the next one
sub _fork ($out) {
    socketpair(my $worker, my $loop, AF_UNIX, SOCK_STREAM, PF_UNSPEC)
        or die "Can't make a socket pair for the script's accept loop: $!\n";
    my $pid = fork // die "Can't fork the script's accept loop: $!\n";
    if ($pid) {
        close $loop;
        $out->{loop} = {pid => $pid, sock => $worker};
        die bless {code => 0}, 'Perennial::Executor::Exit';
    }
    close $worker;
    alarm 0;

    # A process of its own now: the worker's signal handlers and name are not its
    my @signals = qw(TERM INT HUP USR1 USR2 ALRM CHLD PIPE);
    @SIG{@signals} = ('DEFAULT') x @signals; ## no critic (RequireLocalizedPunctuationVars) for good
    $0    = "perennial accept loop: $0";     ## no critic (RequireLocalizedPunctuationVars) for good
    $LOOP = {sock => $loop, turns => 0};
    return _next_turn();
}

# In the loop process: the previous turn's end goes to the worker, and the next request, when
# it comes, becomes %ENV, STDIN, STDOUT and STDERR; -1 (the loop ends) when the worker is gone
sub _next_turn () {
    my $sock = $LOOP->{sock};
    if ($LOOP->{turns}++) { send_frame($sock, 'D', '') or return -1 }
    my ($type, $frame) = read_frame($sock);
    return -1 unless defined $type && $type eq 'R';
    my $request = Storable::thaw($frame);
    %ENV = %{$request->{env}};    ## no critic (RequireLocalizedPunctuationVars) the turn's own
    open(my $in, '<', \$request->{body}) or return -1;
    *STDIN = $in;    ## no critic (RequireLocalizedPunctuationVars) the turn's, until the next
    {
        no warnings 'untie';    ## no critic (ProhibitNoWarnings) the worker's objects stay behind
        untie *STDOUT;
        untie *STDERR;
    }
    tie *STDOUT, __PACKAGE__ . '::Stream', $sock, 'O';
    tie *STDERR, __PACKAGE__ . '::Stream', $sock, 'E';
    return 0;
}

# In the worker: one request through the loop process. $out takes what the turn prints, $errors
# what it writes to STDERR. False when the loop process was gone before it took the request
# (which then runs as usual, and the loop starts again); a loop process that ends during a
# turn has ended the turn, as a CGI process that exits.
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

# The loop process goes: its socket closes, so its Accept returns -1 and the script ends
sub retire ($class, $loop) {
    return if $loop->{gone}++;
    close $loop->{sock};
    waitpid $loop->{pid}, 0;
    return;
}

sub send_frame ($sock, $type, $data) {
    my $bytes = pack('a1 N', $type, length $data) . $data;
    my $done  = 0;
    while ($done < length $bytes) {
        my $n = syswrite $sock, $bytes, length($bytes) - $done, $done;
        next if !defined $n && $!{EINTR};
        return 0 unless $n;
        $done += $n;
    }
    return 1;
}

sub read_frame ($sock) {
    my $head = _read_exactly($sock, 5) // return;
    my ($type, $length) = unpack 'a1 N', $head;
    my $data = _read_exactly($sock, $length) // return;
    return ($type, $data);
}

sub _read_exactly ($sock, $length) {
    my $buf = '';
    while (length $buf < $length) {
        my $n = sysread $sock, $buf, $length - length $buf, length $buf;
        next if !defined $n && $!{EINTR};
        return unless $n;
    }
    return $buf;
}

# STDOUT and STDERR of a turn in the loop process: frames to the worker
package Perennial::Executor::AcceptLoop::Stream;    ## no critic (ProhibitMultiplePackages)

sub TIEHANDLE ($class, $sock, $type) { bless {sock => $sock, type => $type}, $class }
sub BINMODE   ($self, @layer)        {1}
sub CLOSE     ($self)                {1}
sub FILENO    ($self)                {undef}

sub PRINT ($self, @list) {
    my $text = join($, // '', @list) . ($\ // '');
    utf8::encode($text) if utf8::is_utf8($text);
    return Perennial::Executor::AcceptLoop::send_frame($self->{sock}, $self->{type}, $text);
}
sub PRINTF ($self, $format, @list) { $self->PRINT(sprintf $format, @list) }

sub WRITE ($self, $buf, $len = undef, $offset = 0) {
    my $part = substr $buf, $offset, $len // length $buf;
    return $self->PRINT($part) ? length $part : undef;
}

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
