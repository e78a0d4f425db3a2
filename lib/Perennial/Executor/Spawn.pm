package Perennial::Executor::Spawn;
use v5.36;
use Errno qw(ENOEXEC);
use POSIX ();
use Perennial::Twins;

# A CGI script's process. The C (xs/Spawn.xs) starts it with posix_spawn, which does not copy
# the worker: forking a worker of 40 MB to exec a script cost mod_cgi's whole request time
# again in page tables and copied pages (the design notes). The Perl twin forks and execs.
# Both run the file itself, as mod_cgi's execve does: no shell for a file without a #! line.
Perennial::Twins::install(__PACKAGE__, qw(spawn));

# The program $file with @$args after its name, %$env its whole environment, in $dir, with the
# descriptors $in, $out and $err as its 0, 1 and 2; PIPE and INT as a new program has them, no
# signal blocked. Its pid, or undef with $! saying why it did not start (the directory, or the
# exec), after which there is no child to wait for.
sub pp_spawn ($file, $args, $env, $dir, $in, $out, $err) {
    pipe(my $failed_r, my $failed_w) or return;    # Both close on exec: nothing read is success
    my $pid = fork // return;
    _child($file, $args, $env, $dir, $in, $out, $err, $failed_w) unless $pid;
    close $failed_w;
    my $got = sysread $failed_r, my $errno, 4;
    return $pid unless $got;
    waitpid $pid, 0;
    $! = unpack 'i', $errno;    ## no critic (RequireLocalizedPunctuationVars) the caller's answer
    return;
}

sub _child ($file, $args, $env, $dir, $in, $out, $err, $failed) {
    my $fail = sub { syswrite $failed, pack('i', $! + 0); POSIX::_exit(127) };
    POSIX::dup2($in,  0) // $fail->();
    POSIX::dup2($out, 1) // $fail->();
    POSIX::dup2($err, 2) // $fail->();
    chdir $dir or $fail->();
    %ENV     = %$env;    ## no critic (RequireLocalizedPunctuationVars) the child's own, until exec
    $SIG{$_} = 'DEFAULT' for qw(PIPE INT);    ## no critic (RequireLocalizedPunctuationVars)
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new);

    # perl's exec asks the shell to run a file that is not a program (execvp); execve does not
    if (open my $fh, '<', $file) {
        sysread $fh, my $magic, 4;
        if (($magic // '') !~ /\A(?:#!|\x7fELF)/) {
            $! = ENOEXEC;    ## no critic (RequireLocalizedPunctuationVars) what $fail sends
            $fail->();
        }
    }
    exec {$file} $file, map { $_ // '' } @$args or $fail->();
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
no other descriptor of the worker's (Perl opens every other one close-on-exec). SIGPIPE and
SIGINT, which a worker ignores, are back to their default, and no signal is blocked.

With the C build it is C<posix_spawn(3)>: glibc's child shares the worker's memory until it
execs, so a large worker costs no more to start a script from than a small one. Without it,
the Perl twin forks and execs. Both report a failure to start (no such file, no permission,
not a program, no such directory) as undef with C<$!> set, and leave no child behind.

=head1 FUNCTIONS

=head2 spawn

    my $pid = Perennial::Executor::Spawn::spawn($file, \@args, \%env, $dir, $in, $out, $err);

=cut
