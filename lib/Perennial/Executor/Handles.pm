package Perennial::Executor::Handles;
use v5.36;
use Exporter qw(import);
use Perennial::Twins;

# A script's STDIN, STDOUT and STDERR, given another handle's IO for a request. Perl empties its
# cache of class names whenever a glob is assigned an IO, which made every `Class->method` and
# `bless` by name after it look its class up again (three times a request); the C
# (xs/Handles.xs) puts the IO in place without that, the Perl twin assigns it.
Perennial::Twins::install(__PACKAGE__, qw(use_io use_stdout_io));

our @EXPORT_OK = qw(stdout_io use_io use_stdout_io);

# A handle whose IO a request's STDOUT is tied on, one for all requests of the process (a tie on
# an empty local glob made a new IO each time). What a request leaves on it is undone: its
# autoflush by use_stdout_io before the next, and a file the script opened on it itself by the
# caller, who closes it after; and while it is tied, a request run inside that one (an internal
# redirect) needs an IO of its own.
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

# STDOUT for a script's request: $handle's IO unless that is tied now (a request's STDOUT while
# a request run inside it, an internal redirect, uses it: the glob is then left without one, and
# its tie makes a new one); selected, as in a new perl, since a script may have left another
# handle selected; and without autoflush, which a script may have left on it
sub pp_use_stdout_io ($glob, $handle) {
    pp_use_io($glob, $handle) unless tied *$handle;
    select $glob; ## no critic (ProhibitOneArgSelect) what print with no handle writes to
    $| = 0;       ## no critic (RequireLocalizedPunctuationVars) the kept IO's, set for each request
    return;
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
    use_stdout_io(\*STDOUT, stdout_io());
    tie *STDOUT, 'Perennial::Executor::Output', $out;

The handle whose IO, one for the process, each request's STDOUT is tied on. The caller closes
it after the script if the script opened it on a file itself; a request run while it is tied
(inside another) leaves it alone.

=head2 use_stdout_io

    use_stdout_io(\*STDOUT, stdout_io());

As C<use_io>, unless the handle's IO is tied now: then the glob is left as it is. Either way the
glob is then the selected handle, without autoflush, as STDOUT is when a new perl starts: a
script that left another handle selected, or C<$|> set, leaves it to no one after it.

=head2 use_io

    Perennial::Executor::Handles::use_io(\*STDOUT, $io);

Puts C<$handle>'s IO (a glob, a glob reference, or an IO reference) in the glob's IO slot; with
anything else the glob has none.

=cut
