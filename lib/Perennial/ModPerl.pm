package Perennial::ModPerl;
use v5.36;
use Scalar::Util ();
use Hash::Util   qw(hv_store);
use Perennial::Config::Conditional;
use Perennial::Executor::Exit;
use Perennial::HTTP::Core qw(pid);
use Perennial::ModPerl::Access;
use Perennial::ModPerl::Const;
use Perennial::ModPerl::RequestIO;
use Perennial::ModPerl::RequestRec;
use Perennial::ModPerl::Response;
use Perennial::ModPerl::Server;
use Perennial::ModPerl::Table;
use Perennial::ModPerl::URI;

# mod_perl's API for code that runs in Perennial: the request object that Registry and PerlRun
# scripts get as their first argument and from Apache2::RequestUtil->request (or mod_perl 1's
# Apache->request), of class Apache2::RequestRec, and the modules such code `use`s. The real
# modules of libapache2-mod-perl2 only work inside Apache, so the names are taken here before
# any script loads.

my @PENDING;     # The request running in this process: (env, hit, output, site)
our $NOW;        # The request object of the code running now
our $RUNNING;    # The request phase whose code runs now

# What $ENV{MOD_PERL} says while mod_perl code runs (Debian 12's mod_perl)
our $ENV_VALUE = 'mod_perl/2.0.12';

# MOD_PERL in perl's %ENV while mod_perl code runs, as mod_perl keeps it: not in the C
# environment, so a child process does not see it (nor does one of Apache's). Stored without
# the setenv an assignment makes: Hash::Util's hv_store puts the variable itself in the hash.
# True if this call put it there (the caller takes it out after, with
# Perennial::Executor::Environment::delete_perl_only; Perennial::ModPerl::Phases::run does
# the same in its own lines, a call less on every phase).
sub mark_env () {
    return 0 if exists $ENV{MOD_PERL};
    my $value = $ENV_VALUE;
    return hv_store(%ENV, 'MOD_PERL', $value) ? 1 : 0;
}

# The modules mod_perl code loads that Perennial provides
my @PROVIDED = qw(Apache2::RequestRec Apache2::RequestIO Apache2::RequestUtil Apache2::Response
    Apache2::SubRequest Apache2::Connection Apache2::ServerRec Apache2::ServerUtil Apache2::Log
    Apache2::Const Apache2::URI Apache2::Access Apache2::Module Apache2::Util APR::Table APR::Const
    APR::Pool APR::URI APR::SockAddr ModPerl::Util mod_perl2 Apache Apache::Constants);
$INC{s{::}{/}gr . '.pm'} //= __FILE__ for @PROVIDED;

# A script's request begins. Its object is made when first asked for (by the script's
# arguments, or by ->request from anywhere), cheaply: tables and the rest when they are asked
# for in turn. %site: what the handler knows (location, handler name, log, document_root,
# dir_config, environment, dispatch for custom responses and internal redirects). A request
# whose mod_perl phases run (Perennial::ModPerl::Phases) has its object already, $r: the script
# gets that one.
sub begin ($class, $env, $hit, $out, $site, $r = undef) {
    @PENDING = ();
    if ($r) {
        @$r{qw(hit out site filename path_info)}
            = ($hit, $out, $site, $hit->{file}, $hit->{path_info});
        $out->attach_request($r);
        return $NOW = $r;
    }
    @PENDING = ($env, $hit, $out, $site);
    undef $NOW;
    return;
}

# The phased request is over: its cleanups run, and it lets go of its output and file
sub close_request ($class, $r) {
    $class->_cleanups($r);
    delete @$r{qw(out hit out_writer)};
    return;
}

# A request's object, as begin makes it when first asked for, and as Phases->open makes it for a
# request whose mod_perl phases run from its start ($phases, the Perennial::ModPerl::Phases that
# runs them; %site as for begin, with the merged settings: the dispatcher hands it to each phase
# and to the handler). Only the fields that have a value are stored (a phased request's object
# has no file or output yet, and seldom a request before it): each store and its free cost
# about 400 instructions.
sub request_object ($env, $hit, $out, $site, $phases = undef) {
    my $r = bless {
        env     => $env,
        site    => $site,
        handler => $site->{handler},
        set     => $site->{set},       # The merged settings (AuthType, Require, PerlSetVar ...)
        time    => time,
        },
        'Apache2::RequestRec';
    $r->{phases}                    = $phases                           if $phases;
    @$r{qw(hit filename path_info)} = ($hit, @$hit{qw(file path_info)}) if $hit;
    if ($out) { $r->{out} = $out; $out->attach_request($r) }
    if (my $prev = $env->{'perennial.prev'}) {
        $r->{prev} = $prev;
        Scalar::Util::weaken($prev->{next} = $r);
    }
    return $r;
}

# The script ended: the object no longer answers for the output, and is no longer current;
# its PerlCleanupHandlers and pool cleanups run once its response has gone and is logged, as
# under mod_perl (a failure is logged, the worker goes on; with a server that has no
# psgix.cleanup, now), unless the request goes on through its phases (they run when it closes)
sub end ($class) {
    @PENDING = ();
    my $r = $NOW // return;
    undef $NOW;
    $r->{out}->detach_request if $r->{out};
    return $r if $r->{phases} || !($r->{cleanup} || $r->{pool} && @{$r->{pool}{cleanups}});
    if ($r->{env}{'psgix.cleanup'}) {
        push @{$r->{env}{'psgix.cleanup.handlers'}}, sub ($e) { $class->_cleanups($r) };
    }
    else { $class->_cleanups($r) }
    return $r;
}

# A request's cleanups: the pushed PerlCleanupHandlers in the order pushed, then the pool's in
# the reverse order of their registration, as APR runs a pool's cleanups
sub _cleanups ($class, $r) {
    my @cleanups = (
        (map { ['pushed handler', $_, $r] } @{$r->{cleanup} // []}),
        (map { ['pool cleanup',   @$_] } $r->{pool} ? reverse @{$r->{pool}{cleanups}} : ())
    );
    $class->run_phase(PerlCleanupHandler => $r->_log, \@cleanups, $r) if @cleanups;
    return;
}

sub current ($class, @ignored) { $NOW //= @PENDING ? request_object(@PENDING) : undef }

# Runs [name, code, arguments] as the phase named, for the request $r if there is one: the
# worker's child init and exit hooks, a request's cleanups. One that dies (or leaves by last
# outside a loop) is logged with its name, and the rest run; one that calls exit has ended.
sub run_phase ($class, $phase, $log, $calls, $r = undef) {
    for my $call (@$calls) {
        my ($name, $code, @args) = @$call;
        my (undef, $err) = run_handler($phase, $r, $code, @args);
        $log->error("$phase $name failed in worker $$: $err") if defined $err && $log;
    }
    return;
}

# Code run as the phase named (what current_callback says meanwhile), in scalar context as
# mod_perl calls a handler, with $r as the request that Apache2::RequestUtil->request gives,
# exit ending the code rather than the worker, and a last, next or redo outside its own loops
# its error (as under mod_perl, where perl's caller is C: such a jump would otherwise end a
# loop of the server's): (what it returned, undef) or (undef, why it failed). A process it
# forked that comes back here ends here. One frame from the caller to the code, as
# Perennial::Executor::Exit::run runs a script: each Perl call between them cost a handler's
# request 1.5k to 3k instructions.
sub run_handler ($phase, $r, $code, @args) {
    local $RUNNING = $phase;
    local $NOW     = $r;
    my $pid = local $Perennial::Executor::Exit::IN_REQUEST = pid();
    my ($rc, $ok, $ran) = (undef, 0, 0);
    {
        last if $ran++;    # After a redo
        $ok  = eval { $rc = $code->(@args); 1 };
        $ran = -1;
    }
    my $err = $ok ? undef : Perennial::Executor::Exit::failure($ran, $@);
    Perennial::Executor::Exit->child_ends($err) if pid() != $pid;
    return ($rc, $err);
}

# The request object that runs code on, for the time it runs: an internal redirect's own
# request is current meanwhile, and this one again after
sub keeping_current ($class, $r, $code) {
    local $NOW = $r;
    return $code->();
}

# The phase code runs in: the phase running, else the response phase while a request runs (its
# object made or not), else start-up (what the manager loads runs as PostConfig)
sub phase ($class) {
    return $RUNNING // (@PENDING || $NOW ? 'PerlResponseHandler' : 'PerlPostConfigHandler');
}

package Apache2::RequestRec;    ## no critic (ProhibitMultiplePackages)
use v5.36;
our @ISA = qw(Perennial::ModPerl::RequestRec Perennial::ModPerl::RequestIO
    Perennial::ModPerl::Response Perennial::ModPerl::Access);
our $AUTOLOAD;

sub DESTROY { }                 # Here, so that AUTOLOAD is not asked at the end of every request

# A method mod_perl has and Perennial does not: say so where the script called it
sub AUTOLOAD {    ## no critic (RequireArgUnpacking)
    my $name = $AUTOLOAD =~ s/.*:://r;
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

# A request's pool: tables need nothing from it; what is registered to run when it goes runs at
# the end of the request
package APR::Pool;    ## no critic (ProhibitMultiplePackages)
sub new ($class, @ignored) { bless {cleanups => []}, $class }

sub cleanup_register ($self, $code, $data = undef) {
    push @{$self->{cleanups}}, [$code, $data];
    return;
}

package Apache2::Module;    ## no critic (ProhibitMultiplePackages)

# mod_perl.c, cgi_module ... as <IfModule> sees them; a Perl module name: is it loaded
sub loaded ($name) {
    return $INC{$name =~ s{::}{/}gr . '.pm'} ? 1 : 0 if $name =~ /::/;
    return Perennial::Config::Conditional::module_loaded($name);
}

package mod_perl2;            ## no critic (ProhibitMultiplePackages)
our $VERSION = '2.000012';    # The mod_perl whose API this is (Debian 12's)

package ModPerl::Util;        ## no critic (ProhibitMultiplePackages)

# The phase running: PerlPostConfigHandler while the manager loads code, PerlChildInitHandler
# and PerlChildExitHandler in a worker's hooks, PerlResponseHandler during a request
sub current_callback () { Perennial::ModPerl->phase }

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

=head2 request_object, close_request

    my $r = Perennial::ModPerl::request_object($env, undef, undef, {%site, set => $settings}, $phases);
    Perennial::ModPerl->close_request($r);

A request whose mod_perl phases run (L<Perennial::ModPerl::Phases>): one object from the
first phase to the cleanups, which scripts and handlers of the request get too.
C<request_object> makes the object C<begin> gives as well.

=head2 run_handler, run_phase, phase

    my ($rc, $error) = Perennial::ModPerl::run_handler(PerlAccessHandler => $r, $code, @arguments);
    Perennial::ModPerl->run_phase(PerlChildInitHandler => $log, [[$name, $code, @args]]);
    my $name = Perennial::ModPerl->phase;    # what ModPerl::Util::current_callback says

=cut
