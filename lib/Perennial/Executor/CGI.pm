package Perennial::Executor::CGI;
use v5.36;
use Carp        qw(croak);
use Errno       qw(EINTR);
use POSIX       qw(WNOHANG);
use Time::HiRes ();
use Perennial::Executor::Environment;
use Perennial::Executor::Front qw(where);
use Perennial::Executor::Output;
use Perennial::Executor::Resolver;
use Perennial::Executor::Spawn;
use Perennial::Watchdog;

# mod_cgi: a process for the script on every request, with the CGI environment, the body on
# its standard input, its standard output parsed and streamed, its standard error in the log.
# It finds scripts, builds their environment and parses their output with the same parts as
# the resident executor (Resolver, Environment, Output, Front), and shares nothing else.

# root, log, timeout (seconds without output: 504), check, and what Environment and Front take
sub new ($class, %args) {
    return bless {
        name     => $args{name} // 'CGI',
        log      => $args{log}  // croak('log is required'),
        resolver => Perennial::Executor::Resolver->new(root => $args{root}, check => $args{check}),
        env      => Perennial::Executor::Environment->new(%args),
        front    => Perennial::Executor::Front->new(%args),
        timeout  => $args{timeout} // 60,
    }, $class;
}

sub to_app ($self) { $self->{front}->app($self, $self->{resolver}) }

# A script already found: run it, unless it may not run here
sub serve ($self, $env, $hit, $r = undef) { $self->{front}->serve($self, $env, $hit, $r) }

# mod_cgi compiles nothing, so no script is kept
sub compiled ($self) { () }

# The script's process (Perennial::Executor::Spawn): its pid, or undef with $! set
sub _start ($self, $hit, $env, $stdin, $stdout, $stderr) {
    my %env = (
        PATH => $ENV{PATH} // '/usr/local/bin:/usr/bin:/bin',
        $self->{env}->cgi($env, $hit),
    );
    return Perennial::Executor::Spawn::spawn(
        $hit->{file}, [$self->{env}->argv($env)],
        \%env,        $hit->{dir},
        fileno $stdin,
        fileno $stdout,
        fileno $stderr
    );
}

# Output and errors are read together so that neither pipe can fill up and stall the script,
# until its output ends: the response is whole then, whatever the script does after. True when
# it wrote nothing for Timeout seconds.
sub _pump ($self, $out_r, $err, $out, $file) {
    my $out_fd = fileno $out_r;
    while (1) {
        my $rin = '';
        vec($rin, $out_fd, 1) = 1;
        vec($rin, fileno $err->{fh}, 1) = 1 if $err->{fh};
        my $n = select(my $rout = $rin, undef, undef, $self->{timeout});
        next                             if $n < 0 && $! == EINTR;
        return 1                         if $n <= 0;
        $self->_read_errors($err, $file) if $err->{fh} && vec($rout, fileno $err->{fh}, 1);
        next unless vec($rout, $out_fd, 1);
        my $got = sysread $out_r, my $buf, 65_536;
        return 0 unless $got;
        $out->add($buf);
    }
}

# What the script wrote to its standard error ($err: its handle and the line begun), read into
# the log until it closes it (it ended) or $until passes; once it has, only what is there
# already (a few reads, so that a child writing on to it without end cannot hold the worker)
sub _drain ($self, $err, $file, $until) {
    my $late = 0;
    while ($err->{fh}) {
        my $rin = '';
        vec($rin, fileno $err->{fh}, 1) = 1;
        my $wait = $until - Time::HiRes::time();
        return if $wait <= 0 && ++$late > 16;
        my $n = select(my $rout = $rin, undef, undef, $wait > 0 ? $wait : 0);
        next   if $n < 0 && $! == EINTR;
        return if $n <= 0;
        $self->_read_errors($err, $file);
    }
    return;
}

# One read of the standard error: its lines to the log; at its end, the last line too
sub _read_errors ($self, $err, $file) {
    if (sysread $err->{fh}, my $buf, 65_536) {
        $err->{buf} = $self->_stderr_lines($err->{buf} . $buf, $file);
        return;
    }
    delete $err->{fh};
    $self->_last_line($err, $file);
    return;
}

# The standard error's last line, logged though no newline ended it
sub _last_line ($self, $err, $file) {
    $self->_stderr_lines("$err->{buf}\n", $file) if length $err->{buf};
    $err->{buf} = '';
    return;
}

sub respond ($self, $script, $hit, $env, $respond, $phased = undef) {    # A program: no $r
    my $file = $hit->{file};
    my $out  = Perennial::Executor::Output->new(
        respond => $respond,
        nph     => $hit->{nph}
    );

    # What the script flushed reaches the client as it arrives, as with mod_cgi
    $out->set_autoflush(1);
    my $stdin = $self->_stdin($env) or return $self->{front}->answer_error($env, 500, $respond);
    pipe(my $out_r, my $out_w) or die "Can't make a pipe: $!\n";
    pipe(my $err_r, my $err_w) or die "Can't make a pipe: $!\n";
    my $pid   = $self->_start($hit, $env, $stdin, $out_w, $err_w);
    my $errno = $! + 0;
    close $_ for $out_w, $err_w, $stdin;

    if (!$pid) {    # As mod_cgi's messages; out of processes or memory: 503, try again later
        local $! = $errno;
        my $busy = $!{EAGAIN} || $!{ENOMEM};
        $self->{log}->error(where($hit, $env)
                . ($busy ? ": couldn't create child process: $!" : ": exec of $file failed: $!"));
        return $self->{front}->answer_error($env, $busy ? 503 : 500, $respond);
    }
    my $err       = {fh => $err_r, buf => ''};
    my $timed_out = $self->_pump($out_r, $err, $out, $file);
    close $out_r;
    my $done  = eval { $self->_finish($out, $env, $hit, $respond, $timed_out); 1 };
    my $error = $@;
    my $reap  = sub ($e) { $self->_reap($pid, $hit, $e, $err, $timed_out) };
    if ($env->{'psgix.cleanup'}) {    # After the response has gone, a redirect's included
        push @{$env->{'psgix.cleanup.handlers'}}, $reap;
    }
    else { $reap->($env) }
    die $error unless $done;
    return;
}

# The script's process once its response has gone. Its standard error is read to its end, for
# Timeout seconds more at most, as mod_cgi reads it after the output (a script that closed its
# output and works on, logging, runs to its end). Then one still running (it closed both and
# runs on, or it timed out) gets TERM, and KILL 3 s later, as Apache's mod_cgi ends its
# scripts at the end of their request (a moment's grace first, for one that is exiting). A
# RequestDeadline ends the reading sooner: the reap takes the deadline off the worker's slot
# and keeps it itself, so that the script is ended at it, not the worker.
sub _reap ($self, $pid, $hit, $env, $err, $timed_out) {
    my $file     = $hit->{file};
    my $until    = Time::HiRes::time() + ($timed_out ? 0 : $self->{timeout});
    my $deadline = Perennial::Watchdog::disarm($env);
    my $cut      = defined $deadline && $deadline < $until;
    $self->_drain($err, $file, $cut ? $deadline : $until);
    if (!_ended_within($pid, 0.05)) {
        $self->{log}->info(where($hit, $env)
                . ($cut ? ': still running at the request deadline' : ': still running')
                . ' after its response: TERM');
        kill 'TERM', $pid;
        if (!_ended_within($pid, 3)) {
            $self->{log}->info(where($hit, $env) . ': still running 3 s after TERM: KILL');
            kill 'KILL', $pid;
            waitpid $pid, 0;
        }
    }
    $self->_drain($err, $file, 0);       # What it wrote as it ended
    $self->_last_line($err, $file);      # Unended when a child of its keeps the pipe
    Perennial::Watchdog::rearm($env);    # Other cleanups after it have the deadline too
    return;
}

# Whether the process ended (and is reaped, or is not a child any more) within $seconds
sub _ended_within ($pid, $seconds) {
    my $until = Time::HiRes::time() + $seconds;
    while (1) {
        return 1 if waitpid($pid, WNOHANG);
        return 0 if Time::HiRes::time() >= $until;
        Time::HiRes::sleep(0.005);
    }
}

sub _finish ($self, $out, $env, $hit, $respond, $timed_out) {
    my $where = where($hit, $env);
    if ($timed_out) {
        $self->{log}->error("$where: Timeout waiting for output from CGI script");
        return $self->{front}->answer_error($env, 504, $respond) unless $out->started;
        die "CGI script timed out after its response began\n";
    }
    my $local = $out->local_redirect($env);
    return $self->{front}->internal_redirect($env, $local, $respond) if $local;
    my $bad = $out->finish;
    return unless $bad;
    $self->{log}->error("$where: $bad");
    return $self->{front}->answer_error($env, 500, $respond) unless $out->started;
    die "CGI script failed after its response began\n";
}

# Ready when it may be executed: there is nothing to compile
sub prepare ($self, $hit) {
    return ({}, undef) if -x $hit->{file};
    return (undef, 'not executable (mod_cgi needs the execute bit)', 403);
}

# Each complete line the script wrote to standard error goes to the log with its path
sub _stderr_lines ($self, $buf, $file) {
    while ($buf =~ s/\A([^\n]*)\n//) {
        $self->{log}->error("stderr from $file: $1") if length $1;
    }
    return $buf;
}

# The body as a descriptor the child can read: the spooled file itself, or a pipe already
# holding it (bodies in memory are at most 64 KiB, which a pipe takes without blocking)
sub _stdin ($self, $env) {
    my $input = $env->{'psgi.input'};
    my $fd    = fileno $input;
    if (defined $fd && $fd >= 0) {
        seek($input, 0, 0);
        open(my $dup, '<&', $input) or return;
        return $dup;
    }
    pipe(my $r, my $w) or return;
    my $body = '';
    while ($input->read(my $buf, 65_536)) { $body .= $buf }
    syswrite $w, $body if length $body;
    close $w;
    return $r;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGI - a process for each CGI script request, as Apache's mod_cgi starts one

=head1 SYNOPSIS

    my $app = Perennial::Executor::CGI->new(root => '/srv/cgi-bin', log => $log)->to_app;

=head1 DESCRIPTION

The baseline and the home of scripts that cannot live in a persistent interpreter. The script
file must be executable (otherwise 403) and is executed directly, so its C<#!> line picks the
interpreter. It runs in its own directory with a clean environment: PATH, the CGI/1.1
variables, and the PerlSetEnv/SetEnv and PerlPassEnv/PassEnv ones. Its standard output is
parsed as CGI output and streamed; each line of its standard error goes to the error log as
C<stderr from SCRIPT: ...>. The response is whole when the output ends; the standard error is
read on after it, for Timeout seconds at most, as mod_cgi reads it, and a script still running
then gets TERM, and KILL 3 s later. A script that writes nothing for Timeout seconds gets the
same, and the client 504.

=head1 METHODS

=head2 new

    my $cgi = Perennial::Executor::CGI->new(root => $dir, log => $log, timeout => 60);

=head2 serve, to_app

As L<Perennial::Executor>'s, through L<Perennial::Executor::Front>.

=head2 prepare, respond

What Front calls: C<prepare> refuses a file without its execute bit (403), C<respond> starts
it (L<Perennial::Executor::Spawn>: the file itself, as mod_cgi's execve, so a file without a
C<#!> line is refused with a 500 and "exec of FILE failed: Exec format error" in the log, as
Apache's). A script that cannot start because the system is out of processes or memory
gets 503.

=head2 compiled

Nothing: mod_cgi keeps no compiled script.

=cut
