package Perennial::Executor::Children;
use v5.36;
use File::Spec ();
use File::Temp ();
use POSIX      ();

# Processes that a resident script starts (system, backticks, a piped open, fork and exec)
# inherit the worker's file descriptors 0, 1 and 2, where a CGI process has its request: the
# body, the pipe to the client and the error log. Perl flushes every PerlIO handle before it
# makes a process; a handle with this package's :via layer hears that flush, and from then on,
# for the rest of the request, descriptors 1 and 2 are files whose bytes the script's output
# takes in before its next print (so they keep their place, as under mod_cgi) and the error log
# takes line by line, and descriptor 0 holds the part of the body the script has not read. A
# request that starts no process pays nothing.

our $RUNNING;    # The log of the executor whose script runs: set (local) by it
my %WORKER;      # The worker's own descriptors, kept (duplicated) while a request has them
my $HOOK;        # The handle whose flush says that a process is about to be made

# Once per process, before any script runs
sub watch ($class) {
    $HOOK //= do {
        open(my $hook, '>:via(Perennial::Executor::Children::Hook)', File::Spec->devnull)
            or die "Can't open the handle that watches for child processes: $!\n";
        $hook;
    };
    return;
}

# From the hook, in the worker, when the running script is about to start its first process:
# its output ($out, the script's STDOUT) keeps what the children were lent
sub lend ($class, $out, $log) {
    my ($out_read, $out_write) = _sink() or return _refused($log, $!);
    my ($err_read, $err_write) = _sink() or return _refused($log, $!);
    my %lend = (1 => $out_write, 2 => $err_write);
    my $body = _unread_body(\*STDIN);
    $lend{0} = $body if $body;
    my $lent = {};
    $out->lend_children({read => $out_read, pid => $$, lent => $lent, stderr => $err_read});
    for my $fd (sort keys %lend) {
        $WORKER{$fd} //= POSIX::dup($fd) // return _refused($log, $!);
        POSIX::dup2(fileno $lend{$fd}, $fd) // return _refused($log, $!);
        $lent->{$fd} = $lend{$fd};
    }
    return;
}

# After the script: what the children wrote goes to the output and the log (STDERR, still
# tied), and the worker has its descriptors back. Children still running write on to files
# that nobody reads.
sub give_back ($class, $out) {
    POSIX::dup2($WORKER{$_}, $_) for keys %{$out->children->{lent}};    # First: nothing of ours
    my $children = $out->take_back_children;                            # can write to the files
    my $errors   = tied *STDERR;
    while (sysread $children->{stderr}, my $part, 65_536) {
        $errors->take($part) if ref $errors eq 'Perennial::Executor::Errors';
    }
    return;
}

# A file that children append to, and a handle of its own to read it from where it was left:
# perl's own temporary file (open of undef: made in $TMPDIR or /tmp and unlinked at once)
# opened twice more through /proc. File::Temp's named file only where /proc cannot: its names,
# checks and modules cost a worker's first such request some 43 pages of copy-on-write memory
# (bench/pages.pl) and each one thousands of instructions.
sub _sink () {
    open(my $fh, '+>', undef) or return;
    my $path = '/proc/self/fd/' . fileno $fh;
    my ($read, $write);
    return ($read, $write) if open($write, '>>', $path) && open($read, '<', $path);
    return _named_sink();
}

sub _named_sink () {
    my ($fh, $name) = eval { File::Temp::tempfile('perennial-child-XXXXXX', TMPDIR => 1) };
    return unless $fh;
    my $ok = open(my $write, '>>', $name) && open(my $read, '<', $name);
    unlink $name;
    CORE::close $fh;
    return $ok ? ($read, $write) : ();
}

# The body from where the script's STDIN is: the file it was spooled to, or a copy of the rest
sub _unread_body ($input) {
    my $fd = fileno $input;
    return $input if defined $fd && $fd >= 0;
    my $at   = tell $input;
    my $rest = do { local $/; readline $input }
        // '';
    seek $input, $at, 0;
    return unless length $rest;
    open(my $copy, '+>', undef) or return;
    binmode $copy;
    print {$copy} $rest or return;
    seek $copy, 0, 0 or return;    # Written out first (no IO::File loaded for a flush)
    return $copy;
}

sub _refused ($log, $why) {
    $log->warn("child processes of this request write to the worker's own descriptors: $why");
    return;
}

package Perennial::Executor::Children::Hook;    ## no critic (ProhibitMultiplePackages)

# The :via layer: perl calls FLUSH on every handle before fork, system, exec, backticks and a
# piped open
sub PUSHED ($class, @ignored)      { bless {}, $class }
sub WRITE  ($self, $buf, @ignored) { length $buf }

sub FLUSH ($self, @ignored) {
    my $log = $Perennial::Executor::Children::RUNNING or return 0;
    my $out = Perennial::Executor::Output::on_stdout();
    Perennial::Executor::Children->lend($out, $log)
        if $out
        && !$out->children
        && $Perennial::Executor::Exit::IN_REQUEST == $$;
    return 0;
}

1;

__END__

=head1 NAME

Perennial::Executor::Children - a resident script's child processes write to its request

=head1 SYNOPSIS

    Perennial::Executor::Children->watch;    # once per process
    local $Perennial::Executor::Children::RUNNING = $log;
    run_script();    # STDOUT on its output, STDERR tied to its errors, STDIN its body
    Perennial::Executor::Children->give_back($out) if $out->children;

=head1 DESCRIPTION

Under mod_cgi a script's children share its standard input, output and error: the body, the
response and the error log. A resident script's children would share the worker's instead, so
their output would be lost. When a script is about to start its first process (perl flushes
every handle first, and a C<:via> handle hears it), descriptors 1 and 2 become files, and 0 the
unread body; the output reads what children wrote before each of the script's prints and at
its end, so the response has their bytes where mod_cgi puts them, and the error log has their
lines as "stderr from SCRIPT". Children left running after the request write to files nobody
reads (mod_cgi would hold the response open until they end).

=cut
