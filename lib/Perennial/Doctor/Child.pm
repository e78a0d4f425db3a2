package Perennial::Doctor::Child;
use v5.36;
use File::Temp ();
use JSON::PP   ();
use POSIX      ();

# perennial doctor's work on a script happens in a process of its own: what a script's BEGIN
# blocks and runs do (load modules, print, define subs, leave handles open, wait for ever)
# stays there. The child's STDOUT goes nowhere and its STDERR to a file; what the work returns
# comes back as JSON.

# What $work returns (a hash), with {log} (what the child wrote to STDERR); {error} instead
# when it died, took longer than $seconds, or ended early ($doing names it: 'run', ...)
sub run ($class, $doing, $seconds, $work) {
    my $log = File::Temp->new;
    pipe(my $in, my $out) or die "Can't make a pipe: $!\n";
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        close $in;
        open(STDOUT, '>', '/dev/null') or POSIX::_exit(2);
        open(STDERR, '>', "$log")      or POSIX::_exit(2);
        alarm $seconds;
        my $got = eval { $work->() } // {error => ($@ =~ s/\s+\z//r)};
        print {$out} JSON::PP->new->canonical->encode($got);
        close $out;
        POSIX::_exit(0);
    }
    close $out;
    my $json = do { local $/; <$in> };
    waitpid $pid, 0;
    my $status = $?;
    my $got
        = length $json ? JSON::PP->new->decode($json)
        : {
        error => ($status & 127) == POSIX::SIGALRM()
        ? "its $doing took longer than $seconds seconds, and was stopped"
        : "the process ended (status $status) before its $doing was done"
        };
    $got->{log} = do { local (@ARGV, $/) = ("$log"); <> }
        // '';
    return $got;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Child - perennial doctor's work on a script, in a process of its own

=head1 SYNOPSIS

    my $got = Perennial::Doctor::Child->run(examination => 30, sub { {found => [...]} });
    warn $got->{error} if $got->{error};

=head1 DESCRIPTION

Runs a piece of work in a forked child with STDOUT sent nowhere, STDERR kept in a temporary
file (returned as C<log>) and an alarm of the given seconds, and returns the hash the work
returned, passed back as JSON; C<error> says why when it died, was stopped or ended early.

=cut
