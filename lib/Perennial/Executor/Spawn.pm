package Perennial::Executor::Spawn;
use v5.36;
use Errno qw(EINTR ENOEXEC);
use POSIX ();
use Perennial::Twins;

# A CGI script's process. The C (xs/Spawn.xs) starts it with posix_spawn, which does not copy
# the worker: forking a worker of 40 MB to exec a script cost mod_cgi's whole request time
# again in page tables and copied pages (the design notes). The Perl twin forks and execs.
# Both run the file itself, as mod_cgi's execve does: no shell for a file that is not a
# program (perl's exec would give it to /bin/sh, as execvp does).
Perennial::Twins::install(__PACKAGE__, qw(spawn));

# execve's number (perl's syscall.ph); without it, perl's exec after a look at the file's start
# (which a #! naming a file that is not a program still gets past, to /bin/sh)
our $SYS_EXECVE
    = eval { require 'syscall.ph'; &SYS_execve() };    ## no critic (RequireBarewordIncludes)

# The program $file with @$args after its name, %$env its whole environment, in $dir, with the
# descriptors $in, $out and $err as its 0, 1 and 2; its signals as Apache's CGI scripts have
# them (PIPE, INT and XFSZ ignored, the rest at their default, none blocked). Its pid, or undef
# with $! saying why it did not start (the directory, or the exec), after which there is no
# child to wait for.
sub pp_spawn ($file, $args, $env, $dir, $in, $out, $err) {
    pipe(my $failed_r, my $failed_w) or return;    # Both close on exec: nothing read is success
    my $pid = fork // return;
    _child($file, $args, $env, $dir, [$in, $out, $err], $failed_w) unless $pid;
    close $failed_w;
    my ($got, $errno);
    1 until defined($got = sysread $failed_r, $errno, 4) || $! != EINTR;
    return $pid unless $got;
    waitpid $pid, 0;
    $! = unpack 'i', $errno;    ## no critic (RequireLocalizedPunctuationVars) the caller's answer
    return;
}

# In the child: nothing it does may return into the worker's code
sub _child ($file, $args, $env, $dir, $fds, $failed) {
    eval {
        my @from = map { _above_stdio($_) } @$fds;
        POSIX::dup2($from[$_], $_) // die for 0 .. 2;
        POSIX::close($from[$_]) for grep { $from[$_] != $fds->[$_] } 0 .. 2;
        chdir $dir or die;
        $SIG{$_} = 'IGNORE' for qw(PIPE INT XFSZ);    ## no critic (RequireLocalizedPunctuationVars)
        $SIG{FPE} = 'DEFAULT';                        ## no critic (RequireLocalizedPunctuationVars)
        POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new);
        _exec($file, [$file, @$args], [map { "$_=" . ($env->{$_} // '') } keys %$env]);
    };
    syswrite $failed, pack('i', $! + 0);
    POSIX::_exit(127);
}

# The file executed itself with these strings (bytes, as the C twin gives them): dies if not
sub _exec ($file, $argv, $env) {
    for (@$argv, @$env) { $_ //= ''; utf8::downgrade($_, 1); s/\0.*//s }
    if ($SYS_EXECVE) {
        syscall($SYS_EXECVE, $file, pack('p*', @$argv, undef), pack('p*', @$env, undef));
        die;
    }
    if (open my $fh, '<', $file) {    # No execve: perl's exec, but not for what sh would run
        sysread $fh, my $magic, 4;
        if (($magic // '') !~ /\A(?:#!|\x7fELF)/) {
            $! = ENOEXEC;    ## no critic (RequireLocalizedPunctuationVars) what the child sends
            die;
        }
    }
    %ENV = map {/\A([^=]*)=(.*)\z/s} @$env;        ## no critic (RequireLocalizedPunctuationVars)
    { no warnings 'exec'; exec {$file} @$argv }    ## no critic (ProhibitNoWarnings) $! says it
    die;
}

# A descriptor that is not 0, 1 or 2 (a dup2 onto one of those could overwrite another before
# it is copied): a copy when it is one of them
sub _above_stdio ($fd) {
    return $fd if $fd > 2;
    my (@low, $copy);
    push @low, $copy while defined($copy = POSIX::dup($fd)) && $copy < 3;
    POSIX::close($_) for @low;
    return $copy // die;
}

1;

__END__

=head1 NAME

Perennial::Executor::Spawn - start a CGI script's process without copying the worker

=head1 SYNOPSIS

    use Perennial::Executor::Spawn;
    my $pid = Perennial::Executor::Spawn::spawn($file, \@argv, \%env, $dir,
        fileno $stdin, fileno $stdout_w, fileno $stderr_w)
        or die "exec of $file failed: $!\n";
    waitpid $pid, 0;

=head1 DESCRIPTION

What L<Perennial::Executor::CGI> starts a script with, as Apache's mod_cgi starts one: the file
itself is executed (its C<#!> line names its interpreter; a file without one is not given to
a shell, as under mod_cgi), with the environment given and nothing else of the worker's, in
the directory given, with the three descriptors as its standard input, output and error and
no other descriptor of the worker's (Perl opens every other one close-on-exec). Its signals
are as Apache's CGI scripts have them: SIGPIPE, SIGINT and SIGXFSZ ignored (so a write to a
closed pipe fails with EPIPE instead of killing the script), every other one at its default,
SIGFPE too (perl ignores it from its start), and none blocked.

With the C build it is C<posix_spawn(3)>: glibc's child shares the worker's memory until it
execs, so a large worker costs no more to start a script from than a small one. Without it,
the Perl twin forks and execs. Both report a failure to start (no such file, no permission,
not a program, no such directory) as undef with C<$!> set, and leave no child behind.

=head1 FUNCTIONS

=head2 spawn

    my $pid = Perennial::Executor::Spawn::spawn($file, \@args, \%env, $dir, $in, $out, $err);

=cut
