package Perennial::Control;
use v5.36;
use POSIX       qw(setsid);
use Time::HiRes ();

# The manager's pid file, and the commands that find a running manager through it

my %SIGNAL = (
    stop            => 'TERM',
    'graceful-stop' => 'WINCH',
    graceful        => 'USR1',
    restart         => 'HUP',
    upgrade         => 'USR2',
    'reopen-logs'   => 'URG'
);

sub daemonize ($class) {
    defined(my $pid = fork) or die "Can't fork: $!\n";
    POSIX::_exit(0) if $pid;
    setsid()             or die "Can't start a new session: $!\n";
    defined($pid = fork) or die "Can't fork: $!\n";
    POSIX::_exit(0) if $pid;
    open(STDIN,  '<', '/dev/null') or die "Can't read /dev/null: $!\n";
    open(STDOUT, '>', '/dev/null') or die "Can't write /dev/null: $!\n";
}

sub read_pid ($class, $file) {
    open(my $fh, '<', $file) or return;
    my $pid = <$fh> // '';
    return $pid =~ /\A(\d+)\s*\z/ ? $1 : undef;
}

sub remove_pid ($class, $file) {
    my $pid = $class->read_pid($file);
    unlink $file if defined $pid && $pid == $$;
}

sub send ($class, $command, $file, $wait = 30) {
    my $signal = $SIGNAL{$command} or die "Unknown command '$command'\n";
    my $pid    = $class->read_pid($file);
    die "Can't find a running server: no pid in \"$file\"\n" unless $pid;
    die "Can't find a running server: process $pid from \"$file\" is gone\n" unless kill 0, $pid;
    kill $signal, $pid or die "Can't send $signal to $pid: $!\n";
    return $class->_wait_upgrade($pid, $file, $wait) if $command eq 'upgrade';
    return "sent $signal to manager $pid"            if $command ne 'stop';
    my $deadline = Time::HiRes::time() + $wait;

    # The manager removes its pid file last; a dead manager that could not is gone too
    while (kill(0, $pid) && ($class->read_pid($file) // 0) == $pid) {
        die "manager $pid still running after $wait seconds\n" if Time::HiRes::time() > $deadline;
        Time::HiRes::sleep(0.05);
    }
    return "manager $pid stopped";
}

# The new manager writes its pid when it starts; the old one is gone once its workers finished
sub _wait_upgrade ($class, $pid, $file, $wait) {
    my $deadline = Time::HiRes::time() + $wait;
    while (1) {
        my $new = $class->read_pid($file) // $pid;
        return "manager $pid replaced by manager $new" if $new != $pid && $class->gone($pid);
        die "upgrade not finished after $wait seconds (see the error log)\n"
            if Time::HiRes::time() > $deadline;
        Time::HiRes::sleep(0.05);
    }
}

# Exited, even if its parent has not collected it yet
sub gone ($class, $pid) {
    return 1 unless kill 0, $pid;
    open(my $fh, '<', "/proc/$pid/stat") or return 0;
    return ((<$fh> // '') =~ /\)\s+Z/) ? 1 : 0;
}

sub write_pid ($class, $file, $replacing = 0) {
    my $old = $class->read_pid($file);
    die "Can't start: a server with pid $old is running (pid file \"$file\")\n"
        if $old && $old != $$ && $old != ($replacing // 0) && kill 0, $old;
    open(my $fh, '>', $file) or die "Can't write pid file \"$file\": $!\n";
    print {$fh} "$$\n"       or die "Can't write pid file \"$file\": $!\n";
    close $fh                or die "Can't write pid file \"$file\": $!\n";
}

1;

__END__

=head1 NAME

Perennial::Control - the pid file, daemonizing, and signals to a running manager

=head1 SYNOPSIS

    Perennial::Control->write_pid('perennial.pid');
    say Perennial::Control->send(graceful => 'perennial.pid');

=head1 DESCRIPTION

What C<apachectl> does: find the manager through its pid file and signal it. C<stop> sends
TERM and waits until the manager is gone, C<graceful-stop> sends WINCH, C<graceful> USR1,
C<restart> HUP, C<reopen-logs> URG, and C<upgrade> sends USR2 and waits until a new manager has
written the pid file and the old one is gone.

=head1 METHODS

=head2 daemonize

    Perennial::Control->daemonize;

Detaches from the terminal (fork, setsid, fork) with standard input and output on /dev/null.

=head2 gone

    print "the manager is gone\n" if Perennial::Control->gone($pid);

True once the process has exited, even while its parent has not collected it (a zombie).

=head2 read_pid

    my $pid = Perennial::Control->read_pid($file);

=head2 remove_pid

    Perennial::Control->remove_pid($file);

Removes the pid file if it names this process.

=head2 send

    my $message = Perennial::Control->send(stop => $file, 30);

Signals the manager; for C<stop>, waits up to the given seconds for it to exit.

=head2 write_pid

    Perennial::Control->write_pid($file, $replacing_pid);

Refuses to start when the pid file names a live process, unless it is the manager being
replaced by a hot upgrade.

=cut
