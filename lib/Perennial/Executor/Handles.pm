package Perennial::Executor::Handles;
use v5.36;
use Exporter qw(import);
use Perennial::Twins;

# A script's STDIN, STDOUT and STDERR, given another handle's IO for a request. Perl empties its
# cache of class names whenever a glob is assigned an IO, which made every `Class->method` and
# `bless` by name after it look its class up again (three times a request); the C
# (xs/Handles.xs) puts the IO in place without that, the Perl twin assigns it.
Perennial::Twins::install(__PACKAGE__, qw(use_io));

our @EXPORT_OK = qw(use_io);

# The glob *$glob (made local by the caller, so without an IO) reads and writes through
# $handle's IO: a glob, a reference to one, or to an IO; anything else leaves it without one
sub pp_use_io ($glob, $handle) {
    my $io = ref $handle eq 'IO::File' ? $handle : eval { *$handle{IO} };
    *$glob = $io if $io;
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

=head2 use_io

    Perennial::Executor::Handles::use_io(\*STDOUT, $io);

Puts C<$handle>'s IO (a glob, a glob reference, or an IO reference) in the glob's IO slot; with
anything else the glob has none.

=cut
