package Perennial::Executor::Handles;
use v5.36;
use Exporter     qw(import);
use Scalar::Util qw(refaddr);
use Perennial::Twins;

# A script's STDIN, STDOUT and STDERR, given another handle's IO for a request. Perl empties its
# cache of class names whenever a glob is assigned an IO, which made every `Class->method` and
# `bless` by name after it look its class up again (three times a request); the C
# (xs/Handles.xs) puts the IO in place without that, the Perl twin assigns it. STDOUT is, in C,
# a handle on the script's output (its PerlIO layer, xs/Output.xs); the Perl twin ties it.
Perennial::Twins::install(__PACKAGE__, qw(use_io open_stdout close_stdout));

our @EXPORT_OK = qw(stdout_io open_stdout close_stdout use_io);

# A handle whose IO a request's STDOUT is on, one for all requests of the process (a handle on
# an empty local glob made a new IO each time). What a request leaves on it is undone: its
# autoflush by open_stdout before the next, and a file the script opened on it itself by the
# caller, who closes it after close_stdout; and while it is in use, a request run inside that
# one (an internal redirect) needs an IO of its own.
sub stdout_io () {
    state $handle = do {
        open(my $fh, '<', \'') or die "Can't open a handle for STDOUT: $!\n";
        CORE::close($fh);
        $fh;
    };
    return $handle;
}

# The glob *$glob (made local by the caller, so without an IO) reads and writes through
# $handle's IO: a glob, a reference to one, or to an IO; anything else leaves it without one
sub pp_use_io ($glob, $handle) {
    my $io = ref $handle eq 'IO::File' ? $handle : eval { *$handle{IO} };
    *$glob = $io if $io;
    return;
}

# STDOUT for a script's request, tied to $out (whose class's TIEHANDLE returns its argument),
# with the layers its script pushed as it compiled ($layers, Perennial::Executor::Layers, or
# undef): $handle's IO while it is free, neither tied nor open (not while a request run inside
# another, an internal redirect, finds it the outer one's: the glob then gets a new one, as tie
# makes it); selected, as in a new perl, since a script may have left another handle selected;
# and without autoflush, which a script may have left on it. Returns what was selected before.
sub pp_open_stdout ($glob, $handle, $out, $layers = undef) {
    pp_use_io($glob, $handle) unless tied *$handle || defined CORE::fileno($handle);
    my $was = select $glob;  ## no critic (ProhibitOneArgSelect) what print with no handle writes to
    $| = 0;    ## no critic (RequireLocalizedPunctuationVars) the kept IO's, for each request
    tie *$glob, ref $out, $out;
    $out->layers($layers->copy) if $layers;
    return $was;
}

# After the request: its tie gone; the kept IO untied too if it is still tied to $out (a script
# that assigned another handle to the glob left it so); $was selected again. True when a file
# is open on the glob's IO: one the script opened itself, for the caller to close.
sub pp_close_stdout ($glob, $handle, $out, $was) {
    no warnings 'untie';    ## no critic (ProhibitNoWarnings) the executor still holds the object

    # A tie whose object a script overwrote with a plain value (`$_ = 1 for tied *STDOUT`) makes
    # perl's untie crash: tied to the output again first, it unties
    my $tie = tied *$glob;
    tie *$glob, ref $out, $out if defined $tie && !ref $tie;
    untie *$glob;
    my $kept = tied *$handle;
    untie *$handle if ref $kept && refaddr($kept) == refaddr($out);
    select $was    if defined $was;    ## no critic (ProhibitOneArgSelect) as before the request
    return defined CORE::fileno(*$glob);
}

1;

__END__

=head1 NAME

Perennial::Executor::Handles - a script's standard handles for a request, without emptying perl's cache of class names

=head1 SYNOPSIS

    use Perennial::Executor::Handles qw(use_io);
    local *STDIN;
    use_io(\*STDIN, $env->{'psgi.input'});

=head1 DESCRIPTION

Gives a glob, made local by the caller, the IO of another handle, as C<local *STDIN = $fh>
does for reading and writing, but keeping the glob's other slots its own. Perl empties its cache
of class names when it assigns an IO to a glob; the C build does not, since a standard handle's
name hides no package.

=head1 FUNCTIONS

=head2 stdout_io

    local *STDOUT;
    my $selected = open_stdout(\*STDOUT, stdout_io(), $out, $layers);
    ...    # the script runs
    CORE::close(*STDOUT) if close_stdout(\*STDOUT, stdout_io(), $out, $selected);

The handle whose IO, one for the process, each request's STDOUT is on. A request run while it
is in use (inside another) gets one of its own.

=head2 open_stdout

    my $selected = open_stdout(\*STDOUT, stdout_io(), $out, $layers);

As C<use_io>, unless the handle's IO is tied or open now: then the glob gets an IO of its own.
Either way the glob is then the selected handle, without autoflush, as STDOUT is when a new
perl starts, and writes to C<$out> (L<Perennial::Executor::Output>): in C, a handle whose lowest
PerlIO layer is the output's, under perl's buffer while no request object answers for the
output; in Perl, tied to it. C<$layers> (L<Perennial::Executor::Layers>, or undef) are pushed
on it. Returns the handle selected before.

=head2 close_stdout

    CORE::close(*STDOUT) if close_stdout(\*STDOUT, stdout_io(), $out, $selected);

Closes the output's handle (what perl's buffer held goes to the output first) and closes the
output to any duplicate the script kept; or unties the glob (calling C<UNTIE> when the script
tied it to a class of its own that has one), and the kept handle's IO if it is still tied to
C<$out>. Selects C<$selected> again, so a handle the script left selected is not the process's
after it. True when a file is open on the glob's IO, which only the script can have opened.

=head2 use_io

    Perennial::Executor::Handles::use_io(\*STDOUT, $io);

Puts C<$handle>'s IO (a glob, a glob reference, or an IO reference) in the glob's IO slot; with
anything else the glob has none.

=cut
