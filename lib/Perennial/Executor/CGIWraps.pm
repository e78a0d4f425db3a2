package Perennial::Executor::CGIWraps;
use v5.36;
use Perennial::Executor::Output;

# Three of CGI.pm's subs, wrapped once per process, so that a script here sees what it would
# under ModPerl::Registry.
#
# import_names makes each parameter of a request a variable in a namespace ($Q::name,
# @Q::name). It empties the namespace first only under mod_perl or FastCGI (its $MOD_PERL, or
# FCGI_ROLE in the environment); a script here reads the CGI environment as under mod_cgi, where
# every request has a new process, and so one request's parameters stayed in $Q::name for the
# next requests of the worker, other clients' included. The wrapper always empties it first.
#
# A CGI.pm loaded with MOD_PERL set (PerlModule CGI, a startup.pl) works through mod_perl's
# request object: one made for its new(), the query read through $r->args, the head sent
# through $r->send_cgi_header, its reset registered as a cleanup; all of it Perl here, where
# Apache's is C. While a script runs with its CGI variables in %ENV, Perennial::Executor sets
# $CGI::MOD_PERL to 0 and $PLAIN to 1 (the first as Catalyst's WrapCGI does): CGI.pm reads the
# CGI environment and STDIN, as one the script loads itself does, with the same answers. For
# what would differ:
# - r ($q->r) gives the script's request object (Apache2::RequestUtil->request, made when
#   asked) when the CGI object holds none, as under ModPerl::Registry, where new() put it there;
# - header's head goes to the response through the request object under mod_perl, not through
#   STDOUT. Where the script's print of it gives the same (no $, or $\, no autoflush, none of
#   STDOUT's layers, not an nph- script, no request object made, bytes), it is returned to be
#   printed, as it is without mod_perl; otherwise it goes through the request object.
#
# The copies of these subs that packages imported before they were wrapped (use CGI
# qw(:standard) exports import_names and header) are CGI.pm's own: the copy of the script whose
# compile loaded CGI.pm is pointed at the wrapper after that compile, and main's; a module the
# same compile loaded keeps its copy. Only those packages are looked at, by name: walking every
# package to find the others wrote to each one's table, 9 MB more private memory in each
# worker (bench/memory.pl).

our $PLAIN;    # A script runs a CGI.pm loaded with MOD_PERL set on its CGI variables

my %WRAPPED;   # name => [CGI.pm's own, the wrapper]

# After each compile of a script (Perennial::Executor::Scripts, in the manager too when the
# script is preloaded), whoever loaded CGI.pm, and after a request that loaded it (require
# CGI, Perennial::Executor): with the script's package. Every script compiles before its first
# request, so the wrappers are in place before any script calls them.
sub install ($package = undef) {
    return unless defined &CGI::import_names;
    if (!%WRAPPED) {
        my ($import, $r, $header) = (\&CGI::import_names, \&CGI::r, \&CGI::header);
        %WRAPPED = (

            # As CGI.pm reads its arguments: a CGI object (or the default one), the namespace,
            # and the "delete" flag, which is always set
            import_names => [
                $import,
                sub (@args) {
                    my ($self, $namespace) = CGI::self_or_default(@args);
                    return $import->($self, $namespace, 1);
                }
            ],
            r => [$r, sub ($self, @set) { $r->($self, @set) // Apache2::RequestUtil->request }],
            header => [
                $header,
                sub (@args) {
                    my $text = $header->(@args);
                    return $text if !$PLAIN || !length $text || _printable($text);
                    Apache2::RequestUtil->request->send_cgi_header($text);
                    return '';
                }
            ],
        );
        _point($_) for qw(CGI main);
    }
    _point($package) if defined $package;
    return;
}

# The package's copies of the subs, where they are CGI.pm's own, replaced by the wrappers
sub _point ($package) {
    my $table = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the package's table, by name
        \%{"${package}::"};
    };
    for my $name (keys %WRAPPED) {
        next unless exists $table->{$name};
        my $glob = \$table->{$name};
        next unless ref $glob eq 'GLOB' && (*{$glob}{CODE} // 0) == $WRAPPED{$name}[0];
        no warnings 'redefine';    ## no critic (ProhibitNoWarnings) replacing it is the point
        *{$glob} = $WRAPPED{$name}[1];
    }
    return;
}

# Whether the script's print of the head gives what the request object's send_cgi_header gives
sub _printable ($text) {
    return 0 if defined($,) || defined($\) || $| || utf8::is_utf8($text);
    return 0 if $Perennial::ModPerl::NOW;    ## no critic (ProhibitPackageVars) made: it answers
    my $out = Perennial::Executor::Output::on_stdout() // return 0;
    return 0 if $out->{nph} || $out->{layers};    # The Perl twin's tie keeps a binmode's there

    # Over the output's own layer, perl's buffer alone, as a script's STDOUT starts (asked of
    # PerlIO: the output's stdout_layers makes an object, 5 us a request)
    my (undef, @above) = PerlIO::get_layers(*STDOUT);
    return !grep { $_ ne 'perlio' } @above;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGIWraps - CGI.pm's subs that a resident script needs wrapped

=head1 SYNOPSIS

    Perennial::Executor::CGIWraps::install($package);    # once CGI.pm is loaded
    local ($CGI::MOD_PERL, $Perennial::Executor::CGIWraps::PLAIN) = (0, 1)
        if $CGI::MOD_PERL && $setup_env;                 # around a script's run

=head1 DESCRIPTION

C<install> wraps three of CGI.pm's subs, once per process, in CGI.pm, in C<main> and in the
package given, which imported them before they were wrapped (another package that imported
them before, a module the same compile loaded, keeps CGI.pm's own):

=over

=item import_names

C<< $q->import_names('Q') >> (or C<import_names('Q')> with C<use CGI qw(:standard)>) puts each
request parameter in a variable of the namespace. In a resident interpreter the variables of
an earlier request would still be there for a parameter this request does not have; under
ModPerl::Registry CGI.pm empties the namespace before it imports, and mod_cgi starts each
request in a new process. The wrapper always empties the namespace first.

=item r and header

A CGI.pm loaded before the scripts with C<MOD_PERL> set would work through mod_perl's request
object. While a script runs with its CGI variables in C<%ENV>, L<Perennial::Executor> sets
C<$CGI::MOD_PERL> to 0 and C<$PLAIN> to 1, and CGI.pm reads the CGI environment as one the
script loads itself does (L<Perennial::Manual::Scripts/"THE PITFALLS, ONE BY ONE">, CGI.pm's
globals). So that a script sees what it would under ModPerl::Registry, C<< $q->r >> gives the
script's request object when the CGI object holds none (made when first asked; undef outside a
request), and C<header> sends its head through the request object, as under mod_perl,
whenever printing it could give something else (C<$,>, C<$\>, autoflush, a layer pushed on
STDOUT, an nph- script, a request object already made, characters rather than bytes).

=back

=head1 FUNCTIONS

=head2 install

    Perennial::Executor::CGIWraps::install($package);

Wraps the three subs, once per process, and points the package's copies of them at the
wrappers; does nothing when CGI.pm is not loaded.

=cut
