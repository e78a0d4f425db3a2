package Perennial::Twins;
use v5.36;

# The hot path's functions that have a C implementation (xs/NAME.xs, which `make` builds into
# lib/auto/) beside a Perl one that does the same: a package names them, and gets the C ones
# (xs_NAME) when its shared object loads and PERENNIAL_PURE_PERL is not set, the Perl ones
# (pp_NAME) otherwise. The tests run both.

# Whether the Perl twins are asked for, read when perennial starts: a module loaded later (in a
# worker, at its first request) chooses as the first ones did, after start-up has given the
# site's code an environment without it (Perennial::ServerEnv)
my $PURE_PERL = $ENV{PERENNIAL_PURE_PERL};

# Installs NAME as xs_NAME or pp_NAME in $package; returns which: 'C' or 'Perl'
sub install ($package, @names) {
    my $c = !$PURE_PERL && eval { require XSLoader; XSLoader::load($package); 1 };
    return _put($package, $c, @names);
}

# The same for a package whose C functions another package's shared object holds (xs/NAME.xs
# with a section for each package, as Output.xs has for $r->print and APR::Table): that package,
# $loader, is loaded first, and its own install loads the object
sub install_from ($loader, $package, @names) {
    require $loader =~ s{::}{/}gr . '.pm';
    my $c = !$PURE_PERL && !grep { !$package->can("xs_$_") } @names;
    return _put($package, $c, @names);
}

sub _put ($package, $c, @names) {
    my $prefix = $c ? 'xs_' : 'pp_';
    no strict 'refs';    ## no critic (ProhibitNoStrict) the package's own functions, by name
    *{"${package}::$_"} = \&{"${package}::$prefix$_"} for @names;
    return $c ? 'C' : 'Perl';
}

1;

__END__

=head1 NAME

Perennial::Twins - the C or the Perl implementation of a package's hot functions

=head1 SYNOPSIS

    package Perennial::Executor::Environment;
    use Perennial::Twins;
    my $IMPLEMENTATION = Perennial::Twins::install(__PACKAGE__, qw(sync_env));    # C or Perl
    sub pp_sync_env (...) { ... }    # xs_sync_env is in xs/Environment.xs

=head1 DESCRIPTION

Each function listed is installed under its own name from C<xs_NAME>, when the package's shared
object (F<lib/auto/.../NAME.so>, built by C<make> from F<xs/NAME.xs>) loads and
C<PERENNIAL_PURE_PERL> is not set in the environment, or from C<pp_NAME>, its Perl twin. A
package without a C build runs its Perl twins; the error log's start line says which the HTTP
path runs.

=head1 FUNCTIONS

=head2 install

    my $which = Perennial::Twins::install($package, @names);    # 'C' or 'Perl'

=head2 install_from

    Perennial::Twins::install_from('Perennial::Executor::Output', __PACKAGE__, 'print');

The C functions are in another package's shared object: that package is loaded first.

=cut
