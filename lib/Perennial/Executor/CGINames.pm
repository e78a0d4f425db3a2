package Perennial::Executor::CGINames;
use v5.36;

# CGI.pm's import_names makes each parameter of a request a variable in a namespace ($Q::name,
# @Q::name). It empties the namespace first only under mod_perl or FastCGI (its $MOD_PERL, or
# FCGI_ROLE in the environment); a script here reads the CGI environment as under mod_cgi, where
# every request has a new process, and so one request's parameters stayed in $Q::name for the
# next requests of the worker, other clients' included. Here it always empties it first, as
# under ModPerl::Registry: CGI.pm's sub is wrapped, once per process.
#
# The copies of the sub that packages imported before it was wrapped (use CGI qw(:standard)
# exports it) are CGI.pm's own: the copy of the script whose compile loaded CGI.pm is pointed
# at the wrapper after that compile, and main's; a module the same compile loaded keeps its
# copy. Only those packages are looked at, by name: walking every package to find the others
# wrote to each one's table, 9 MB more private memory in each worker (bench/memory.pl).

my ($ORIGINAL, $WRAPPED);

# After each compile of a script (Perennial::Executor::Scripts, in the manager too when the
# script is preloaded), whoever loaded CGI.pm, and after a request that loaded it (require
# CGI, Perennial::Executor): with the script's package. Every script compiles before its first
# request, so the wrapper is in place before any script calls import_names.
sub install ($package = undef) {
    return unless defined &CGI::import_names;
    if (!$WRAPPED) {
        my $import = $ORIGINAL = \&CGI::import_names;

        # As CGI.pm reads its arguments: a CGI object (or the default one), the namespace, and
        # the "delete" flag, which is always set
        $WRAPPED = sub (@args) {
            my ($self, $namespace) = CGI::self_or_default(@args);
            return $import->($self, $namespace, 1);
        };
        _point($_) for qw(CGI main);
    }
    _point($package) if defined $package;
    return;
}

# The package's import_names, when it is CGI.pm's own, replaced by the wrapper
sub _point ($package) {
    my $table = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the package's table, by name
        \%{"${package}::"};
    };
    return unless exists $table->{import_names};
    my $glob = \$table->{import_names};
    return unless ref $glob eq 'GLOB' && (*{$glob}{CODE} // 0) == $ORIGINAL;
    no warnings 'redefine';    ## no critic (ProhibitNoWarnings) replacing it is the point
    *{$glob} = $WRAPPED;
    return;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGINames - CGI.pm's import_names empties its namespace first, as under mod_perl

=head1 SYNOPSIS

    Perennial::Executor::CGINames::install();    # once CGI.pm is loaded

=head1 DESCRIPTION

C<< $q->import_names('Q') >> (or C<import_names('Q')> with C<use CGI qw(:standard)>) puts each
request parameter in a variable of the namespace. In a resident interpreter the variables of
an earlier request would still be there for a parameter this request does not have; under
ModPerl::Registry CGI.pm empties the namespace before it imports, and mod_cgi starts each
request in a new process. C<install> makes CGI.pm's C<import_names> always empty the namespace
first: in CGI.pm, in C<main> and in the package given, which imported the sub before it was
wrapped. (Another package that imported it before, a module the same compile loaded, keeps
CGI.pm's own.)

=head1 FUNCTIONS

=head2 install

    Perennial::Executor::CGINames::install($package);

Wraps C<CGI::import_names>, once per process, and points the package's copy of it at the
wrapper; does nothing when CGI.pm is not loaded.

=cut
