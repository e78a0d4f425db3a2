package Perennial::ModPerl;
use v5.36;
use Time::HiRes ();
use Perennial::ModPerl::Const;
use Perennial::ModPerl::RequestIO;
use Perennial::ModPerl::RequestRec;
use Perennial::ModPerl::Response;
use Perennial::ModPerl::Server;
use Perennial::ModPerl::Table;

# mod_perl's API for code that runs in Perennial: the request object that Registry and PerlRun
# scripts get as their first argument and from Apache2::RequestUtil->request (or mod_perl 1's
# Apache->request), of class Apache2::RequestRec, and the modules such code `use`s. The real
# modules of libapache2-mod-perl2 only work inside Apache, so the names are taken here before
# any script loads.

my $NOW;    # The request object of the request running in this process

# The modules mod_perl code loads that Perennial provides
my @PROVIDED = qw(Apache2::RequestRec Apache2::RequestIO Apache2::RequestUtil Apache2::Response
    Apache2::SubRequest Apache2::Connection Apache2::ServerRec Apache2::ServerUtil Apache2::Log
    Apache2::Const Apache2::URI Apache2::Access APR::Table APR::Const APR::Pool ModPerl::Util
    Apache Apache::Constants);
$INC{s{::}{/}gr . '.pm'} //= __FILE__ for @PROVIDED;

# A request begins: its object, made cheaply (tables and the rest when first asked for).
# %site: what the handler knows (location, handler name, log, document_root, environment,
# dispatch for custom responses, redirect for internal redirects).
sub begin ($class, $env, $hit, $out, $site) {
    my $r = bless {
        env       => $env,
        hit       => $hit,
        out       => $out,
        site      => $site,
        filename  => $hit && $hit->{file},
        path_info => $hit && $hit->{path_info},
        handler   => $site->{handler},
        prev      => $env->{'perennial.prev'},
        time      => int($env->{'perennial.time'} // Time::HiRes::time()),
        },
        'Apache2::RequestRec';
    $out->{request}  = $r if $out;
    $r->{prev}{next} = $r if $r->{prev};
    return $NOW = $r;
}

# The request ended: the object no longer answers for the output, and is no longer current
sub end ($class) {
    my $r = $NOW // return;
    undef $NOW;
    delete $r->{out}{request} if $r->{out};
    return $r;
}

sub current ($class, @ignored) {$NOW}

package Apache2::RequestRec;    ## no critic (ProhibitMultiplePackages)
use v5.36;
our @ISA = qw(Perennial::ModPerl::RequestRec Perennial::ModPerl::RequestIO
    Perennial::ModPerl::Response);
our $AUTOLOAD;

# A method mod_perl has and Perennial does not: say so where the script called it
sub AUTOLOAD {    ## no critic (RequireArgUnpacking)
    my $name = $AUTOLOAD =~ s/.*:://r;
    return if $name eq 'DESTROY';
    my (undef, $file, $line) = caller;
    die "Perennial does not provide Apache2::RequestRec::$name at $file line $line.\n";
}

package Apache2::RequestUtil;    ## no critic (ProhibitMultiplePackages)
sub request ($class, @ignored) { Perennial::ModPerl->current }

package Apache;                  ## no critic (ProhibitMultiplePackages)

sub request ($class, @ignored) {
    my $r = Perennial::ModPerl->current or return;
    $r->{mod_perl1} = 1;
    return $r;
}

package APR::Pool;                                 ## no critic (ProhibitMultiplePackages)
sub new ($class, @ignored) { bless {}, $class }    # Tables here need no pool

package ModPerl::Util;                             ## no critic (ProhibitMultiplePackages)

# The phase running; a script runs in the response phase
sub current_callback () {
    Perennial::ModPerl->current ? 'PerlResponseHandler' : 'PerlChildInitHandler';
}

# Ends the request (not the worker), as exit does in a script
sub exit ($code = 0) { CORE::GLOBAL::exit($code) }

1;

__END__

=head1 NAME

Perennial::ModPerl - mod_perl 2's request object and API for scripts and handlers

=head1 SYNOPSIS

    # A Registry or PerlRun script
    my $r = shift;                               # or Apache2::RequestUtil->request
    $r->content_type('text/plain');
    $r->headers_out->set('X-Served-By' => 'Perennial');
    $r->print('Hello, ', $r->connection->client_ip, "\n");

    # Inside Perennial
    my $r = Perennial::ModPerl->begin($env, $hit, $output, \%site);
    run_script($r);
    Perennial::ModPerl->end;

=head1 DESCRIPTION

Scripts written for mod_perl receive the request object as their first argument (as
ModPerl::Registry and ModPerl::PerlRun pass it); C<< Apache2::RequestUtil->request >> and
C<< Apache->request >> return the same object whether or not C<PerlOptions +GlobalRequest> is
set. Its class is Apache2::RequestRec, with the methods of Apache2::RequestRec,
Apache2::RequestIO, Apache2::Response, Apache2::SubRequest's C<internal_redirect>,
Apache2::RequestUtil and Apache2::Log; C<< $r->server >> is an Apache2::ServerRec, C<<
$r->connection >> an Apache2::Connection, the tables are APR::Table, and Apache2::Const,
APR::Const and Apache::Constants give the constants. A method mod_perl has and Perennial does
not dies with "Perennial does not provide Apache2::RequestRec::NAME at FILE line N." The
object is made with a handful of fields per request; its tables are made when first asked for.
L<Perennial::Manual::Scripts> lists every method and what differs from mod_perl.

=head1 METHODS

=head2 begin, end, current

    my $r = Perennial::ModPerl->begin($env, $hit, $output, \%site);
    my $same = Perennial::ModPerl->current;
    Perennial::ModPerl->end;

=cut
