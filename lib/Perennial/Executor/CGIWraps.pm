package Perennial::Executor::CGIWraps;
use v5.36;

# Four of CGI.pm's subs, wrapped once per process, so that a script here sees what it would
# under ModPerl::Registry.
#
# import_names makes each parameter of a request a variable in a namespace ($Q::name,
# @Q::name). It empties the namespace first only under mod_perl or FastCGI (its $MOD_PERL, or
# FCGI_ROLE in the environment); a script here reads the CGI environment as under mod_cgi, where
# every request has a new process, and so one request's parameters stayed in $Q::name for the
# next requests of the worker, other clients' included. The wrapper always empties it first.
#
# A CGI.pm loaded with MOD_PERL set (PerlModule CGI, a startup.pl) works through mod_perl's
# request object: one made for its new(), its pool and the cleanup registered there, the query
# read through $r->args, the head sent through $r->send_cgi_header; all of it Perl here, where
# Apache's is C. While a script runs with its CGI variables in %ENV, Perennial::Executor puts
# its request in $PLAIN, and two wrappers take CGI.pm's plain path where it gives the same:
# - new does what CGI.pm's new does under mod_perl (the pragmas of the last `use CGI LIST`
#   applied again, -nph dropped, CGI.pm's reset when the script ends: $RESET, which the
#   executor reads) but makes no request object, and reads the query and the body from %ENV and
#   STDIN ($CGI::MOD_PERL is 0 for the call alone);
# - header makes its head as without mod_perl and gives it to the script's output as
#   send_cgi_header does (the same code, without an object), returning '' as under mod_perl.
# Neither does so when the script's request object was made (its query may have been set
# through it), when the script changed its QUERY_STRING or STDIN (mod_perl's path reads the
# request's), nor for a request an internal redirect made (CGI.pm reads the query of the one
# before it there): mod_perl's path then, as everywhere else (handler modules, PerlSetupEnv
# Off, a module's own copy of header). And r ($q->r) gives the script's request object when
# the CGI object holds none (Apache2::RequestUtil->request, made when asked), as under
# ModPerl::Registry, where new() put it there.
#
# The copies of these subs that packages imported before they were wrapped (use CGI
# qw(:standard) exports import_names and header) are CGI.pm's own: the copy of the script whose
# compile loaded CGI.pm is pointed at the wrapper after that compile, and main's; a module the
# same compile loaded keeps its copy. Only those packages are looked at, by name: walking every
# package to find the others wrote to each one's table, 9 MB more private memory in each
# worker (bench/memory.pl).

# The request (PSGI env) of the script that runs with its CGI variables in %ENV, CGI.pm loaded
# with MOD_PERL set; whether CGI.pm's new ran on them since; the script's output
our ($PLAIN, $RESET, $OUT);

my %WRAPPED;    # name => [CGI.pm's own, the wrapper]

# After each compile of a script (Perennial::Executor::Scripts, in the manager too when the
# script is preloaded), whoever loaded CGI.pm, and after a request that loaded it (require
# CGI, Perennial::Executor): with the script's package. Every script compiles before its first
# request, so the wrappers are in place before any script calls them.
sub install ($package = undef) {
    return unless defined &CGI::import_names;
    if (!%WRAPPED) {
        my ($import, $r, $header, $new)
            = (\&CGI::import_names, \&CGI::r, \&CGI::header, \&CGI::new);
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
            r   => [$r, sub (@args) { $r->(@args) // Apache2::RequestUtil->request }],
            new => [
                $new,
                sub (@args) {
                    return $new->(@args) unless $PLAIN && _plain();
                    CGI->_setup_symbols(@CGI::SAVED_SYMBOLS) if @CGI::SAVED_SYMBOLS;
                    undef $CGI::NPH;    ## no critic (ProhibitPackageVars) as CGI.pm's new does
                    $RESET = 1;
                    local $CGI::MOD_PERL = 0;    ## no critic (ProhibitPackageVars) its plain path
                    return $new->(@args);
                }
            ],

            # The head made as without mod_perl, then given to the script's output as
            # send_cgi_header gives it (an nph- head is returned to be printed, as under
            # mod_perl)
            header => [
                $header,
                sub (@args) {
                    return $header->(@args) unless $PLAIN && _plain();
                    my $text = do {
                        local $CGI::MOD_PERL = 0;    ## no critic (ProhibitPackageVars)
                        $header->(@args);
                    };
                    return $text if !length $text || $text =~ m{\AHTTP/};
                    Perennial::ModPerl::Response::send_cgi_header_to($OUT, $text);
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

# Whether CGI.pm takes its plain path: a script runs with its CGI variables, its request object
# not made, its request not made by an internal redirect, and its query, method and input still
# what mod_perl's path would read ($r->args, $r->subprocess_env, $r->read)
sub _plain () {
    return 0 if $Perennial::ModPerl::NOW    ## no critic (ProhibitPackageVars) callers ask $PLAIN
        || $PLAIN->{'perennial.prev'} || ($ENV{QUERY_STRING} // '') ne $PLAIN->{QUERY_STRING};

    # %ENV emptied by the script: mod_perl's path puts the CGI variables back (subprocess_env)
    return 0 if !exists $ENV{REQUEST_METHOD};
    my $input = eval { *{$PLAIN->{'psgi.input'}}{IO} };    # STDIN's, as Executor::Handles made it
    return $input && *STDIN{IO} && $input == *STDIN{IO};
}

# After the script: CGI.pm's reset, which its new registers under mod_perl as the request's
# first pool cleanup (the last to run), when the script made its request object; at once
# otherwise
sub end_script () {
    $RESET = 0;
    my $r = $Perennial::ModPerl::NOW;    ## no critic (ProhibitPackageVars)
    return CGI::initialize_globals() unless $r;
    unshift @{$r->pool->{cleanups}}, [\&CGI::initialize_globals];
    return;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGIWraps - CGI.pm's subs that a resident script needs wrapped

=head1 SYNOPSIS

    Perennial::Executor::CGIWraps::install($package);    # once CGI.pm is loaded

    # Around each script's run (Perennial::Executor): the request, and the script's output,
    # when CGI.pm was loaded with MOD_PERL set and the CGI variables are in %ENV
    local ($Perennial::Executor::CGIWraps::PLAIN, $Perennial::Executor::CGIWraps::RESET,
        $Perennial::Executor::CGIWraps::OUT) = $plain ? ($env, 0, $out) : ();
    ...;    # the script
    Perennial::Executor::CGIWraps::end_script() if $plain && $Perennial::Executor::CGIWraps::RESET;

=head1 DESCRIPTION

C<install> wraps four of CGI.pm's subs, once per process, in CGI.pm, in C<main> and in the
package given, which imported them before they were wrapped (another package that imported
them before, a module the same compile loaded, keeps CGI.pm's own):

=over

=item import_names

C<< $q->import_names('Q') >> (or C<import_names('Q')> with C<use CGI qw(:standard)>) puts each
request parameter in a variable of the namespace. In a resident interpreter the variables of
an earlier request would still be there for a parameter this request does not have; under
ModPerl::Registry CGI.pm empties the namespace before it imports, and mod_cgi starts each
request in a new process. The wrapper always empties the namespace first.

=item new, header and r

A CGI.pm loaded before the scripts with C<MOD_PERL> set works through mod_perl's request
object. While a script runs with its CGI variables in C<%ENV>, L<Perennial::Executor> puts its
request in C<$PLAIN>, and C<new> does what CGI.pm's C<new> does under mod_perl (the pragmas of
the last C<use CGI LIST> again, C<-nph> dropped, CGI.pm's reset when the script ends) without
the request object, reading the query and the body from C<%ENV> and STDIN as without mod_perl
(L<Perennial::Manual::Scripts/"THE PITFALLS, ONE BY ONE">, CGI.pm's globals). C<header>
makes its head the same way and gives it to the script's output as the request object's
C<send_cgi_header> would, returning nothing. Neither takes that path once the script's request
object is made, once the script changed its C<QUERY_STRING> or STDIN, nor in a request an
internal redirect made: mod_perl's path then. C<end_script>, after the script, runs CGI.pm's
reset, or puts it first among the request object's pool cleanups when the script made one.
C<< $q->r >> gives the script's request object when the CGI object holds none (made when first
asked; undef outside a request).

=back

=head1 FUNCTIONS

=head2 install

    Perennial::Executor::CGIWraps::install($package);

Wraps the four subs, once per process, and points the package's copies of them at the
wrappers; does nothing when CGI.pm is not loaded.

=head2 end_script

    Perennial::Executor::CGIWraps::end_script() if $Perennial::Executor::CGIWraps::RESET;

After a script whose C<< CGI->new >> took the plain path: CGI.pm's reset now, or first among
the pool cleanups of the request object the script made (so run last, as under mod_perl).

=cut
