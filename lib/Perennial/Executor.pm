package Perennial::Executor;
use v5.36;
use Carp         qw(croak);
use Cwd          qw(getcwd);
use POSIX        ();
use Scalar::Util qw(blessed);
use Symbol       ();
use Perennial::Executor::AcceptLoop;
use Perennial::Executor::Catalog;
use Perennial::Executor::CGICarp;
use Perennial::Executor::CGIWraps;
use Perennial::Executor::Children;
use Perennial::Executor::CGIPragmas;
use Perennial::Executor::Compiler;
use Perennial::Executor::Environment;
use Perennial::Executor::Errors;
use Perennial::Executor::Exit;    # Before any script compiles: exit ends the request
use Perennial::Executor::Front qw(where);
use Perennial::Executor::Globals;
use Perennial::Executor::Handles qw(stdout_io open_stdout close_stdout use_io);
use Perennial::Executor::Inc;
use Perennial::Executor::Libraries;
use Perennial::Executor::Lint;
use Perennial::Executor::Output;
use Perennial::ModPerl;
use Perennial::Executor::Resolver;
use Perennial::Executor::Scripts;
use Perennial::Executor::Signals;
use Perennial::Executor::Umask;    # Before any script compiles too: its umask ops are marked
use Perennial::HTTP::Core qw(pid);

# Runs CGI scripts inside the worker. One executor serves one script directory with one
# policy; Registry and PerlRun are this class with different policy hashes:
#   cache     mtime: compile once, again when the file changes | never: compile every request
#   flush     empty the script's package after each request (PerlRun)
#   reset_inc forget files the script require'd that are not modules (PerlRun); otherwise they
#             stay the script's own (Perennial::Executor::Inc)
#   chdir     run with the script's directory as the current directory

my %POLICY_KEYS = map { $_ => 1 } qw(cache flush reset_inc chdir);
my %MODE        = (
    registry => {cache => 'mtime', flush => 0, reset_inc => 0},
    perlrun  => {cache => 'never', flush => 1, reset_inc => 1},
);

# The policy of a mode (registry or perlrun), the script's directory current or not
sub policy_of ($class, $mode, $chdir) {
    my $policy = $MODE{$mode} or croak "Unknown mode '$mode': registry or perlrun";
    return {%$policy, chdir => $chdir ? 1 : 0};
}

sub new ($class, %args) {
    my $policy = $args{policy} or croak 'policy is required';
    my @bad    = grep { !$POLICY_KEYS{$_} } keys %$policy;
    croak "Unknown policy key(s): @bad" if @bad;
    Perennial::Executor::Children->watch;              # Before any script can start a process
    Perennial::Executor::AcceptLoop->watch;            # Or run a FastCGI accept loop
    Perennial::Executor::CGIPragmas->read_defaults;    # What its scripts' pragmas change
    my $environment = Perennial::Executor::Environment->new(%args);
    my $self        = bless {
        policy    => $policy,
        cgi_env   => $args{setup_env} // 1,                       # PerlSetupEnv
        keeps     => $policy->{cache} eq 'mtime',                 # Registry: scripts stay compiled
        flushes   => $policy->{flush} || $policy->{reset_inc},    # PerlRun: cleaned after each
        name      => $args{name} // $class,
        log       => $args{log}  // croak('log is required'),
        resolver  => Perennial::Executor::Resolver->new(root => $args{root}, check => $args{check}),
        env       => $environment,
        front     => Perennial::Executor::Front->new(%args, environment => $environment),
        site      => undef,
        home      => getcwd(),
        umask     => umask,
        stdout_io => stdout_io(),
    }, $class;
    $self->{scripts} = Perennial::Executor::Scripts->new(
        policy  => $policy,
        log     => $self->{log},
        root_ns => _root_namespace($args{name} // 'Executor', $args{location}, $args{host}),
        home    => $self->{home},
    );
    Perennial::Executor::Inc::init();
    Perennial::Executor::Catalog::register($self);

    # What the request object of a script here knows of where it runs
    my $dispatch = $args{dispatch};
    $self->{site} = {
        location      => $args{location} // '/',
        set           => $args{set},
        dir_config    => $args{dir_config},
        handler       => 'perl-script',
        log           => $self->{log},
        document_root => $args{document_root} // $args{root},
        environment   => $self->{env},
        dispatch      => $dispatch ? sub ($e) { $$dispatch->($e) } : undef,
    };
    return $self;
}

# The scripts compiled and kept (Registry), for the Perl status view
sub compiled ($self) { $self->{scripts}->compiled($self->{name}) }

# The script of a URL, compiled (again if it changed): (script, undef) or (undef, error)
sub prepare ($self, $hit) { $self->{scripts}->prepare($hit) }

sub to_app ($self) { $self->{front}->app($self, $self->{resolver}, $self->{scripts}) }

# A script already found (by the dispatcher, which walked the configuration for it); $r, the
# request object of a request whose mod_perl phases run, which the script gets too
sub serve ($self, $env, $hit, $r = undef) {
    $self->{front}->serve($self, $env, $hit, $r, $self->{scripts});
}

sub respond ($self, $script, $hit, $env, $respond, $phased = undef) {
    my $out = Perennial::Executor::Output->for_script($respond, $hit->{nph});
    $out->{keep_loop} = $self->{keeps};    # AcceptLoop: Registry keeps a loop, PerlRun not
    my ($died, $r)
        = $self->{loops} && $self->_through_loop($script, $hit, $env, $out)
        ? ()
        : $self->_run_script($script, $hit, $env, $out, $phased);
    if (my $loop = delete $out->{loop}) {    # Its accept loop goes on in a process of its own
        $loop->{mtime} = $hit->{mtime};
        $self->{loops}{$hit->{file}} = $loop;
    }
    if ($out->{handed}) {    # $r->internal_redirect answered: whatever came after is logged
        $self->{log}->error(where($hit, $env) . " after its internal redirect: $died") if $died;
        return;
    }

    # A script that dies after its header block: as under mod_cgi, the client gets that head
    # and what was printed, and the log gets the error
    if ($died && $out->has_head) {
        $self->{log}->error(where($hit, $env) . ": $died");
        undef $died;
    }

    my $local = $out->{local} && $out->local_redirect($env);    # Asked only of one: 1.7k a request
    return $self->{front}->internal_redirect($env, $local, $respond) if $local && !$died;
    return if !$died && $r && $self->_unprinted($r, $out, $respond);
    my $bad = $died // $out->finish;
    return $bad ? $self->_failed($hit, $env, $out, $respond, $bad) : ();
}

# A script that died, or whose output was bad: logged, and a 500 unless its response began
sub _failed ($self, $hit, $env, $out, $respond, $bad) {
    $self->{log}->error(where($hit, $env) . ": $bad");
    return $self->{front}->answer_error($env, 500, $respond) unless $out->started;
    die "script failed after its response began\n";             # The server closes the connection
}

# A script whose FastCGI accept loop runs in a process of its own (AcceptLoop): the request
# goes there, unless the script changed or the process is gone (false: run it here)
sub _through_loop ($self, $script, $hit, $env, $out) {
    my $loop = $self->{loops}{$hit->{file}} or return 0;
    if ($loop->{mtime} != $hit->{mtime}) {
        Perennial::Executor::AcceptLoop->retire(delete $self->{loops}{$hit->{file}});
        return 0;
    }
    my $in   = $env->{'psgi.input'};
    my $body = do { local $/; readline $in }
        // '';
    my $done = Perennial::Executor::AcceptLoop->forward($loop, $out, $script->{stderr},
        $self->{env}->groups($env, $hit), $body);
    $script->{stderr}->flush;
    delete $self->{loops}{$hit->{file}} if $loop->{gone};
    return 1                            if $done;
    seek $in, 0, 0;
    return 0;
}

# Nothing printed, but a head set through $r: its status's page (true: answered), or the head
# alone for the output to send
sub _unprinted ($self, $r, $out, $respond) {
    return 0 unless $r->{head_set} && !$out->has_head && !$out->error;
    if (my $page = $r->unprinted_response) {
        ref $page eq 'CODE' ? $page->($respond) : $respond->($page);
        return 1;
    }
    $out->set_head($r->head_fields);
    return 0;
}

# The script runs with the CGI environment (in %ENV since Front put it there before the
# compile, unless PerlSetupEnv is Off), STDIN, STDOUT and a clean set of globals. (One sub, not
# one per step: each Perl call on a request's way costs 1.5k to 3k instructions,
# docs/design-notes.md.)
## no critic (ProhibitExcessComplexity) one sub on purpose, as said above
sub _run_script ($self, $script, $hit, $env, $out, $phased) {

    # A script that writes %ENV itself gets the whole environment back afterwards
    local %ENV = %ENV if $script->{writes_env};

    # Its handles, each given an IO without emptying perl's cache of class names (Handles)
    local *STDIN;
    use_io(\*STDIN, $env->{'psgi.input'});
    local *STDOUT;    # On its output, without autoflush, with the layers it pushed compiling
    my $selected = open_stdout(\*STDOUT, $self->{stdout_io}, $out, $script->{stdout_layers});
    ## no critic (RequireLocalizedPunctuationVars) local above: its `format STDOUT`, for write
    *STDOUT = $script->{format} if $script->{format};
    ## use critic
    local *STDERR;
    use_io(\*STDERR, _stderr_of($script));
    my $errors = $script->{stderr};
    $errors->reset_layers($script->{stderr_layers}) if $script->{stderr_layers};
    local $Perennial::Executor::Children::RUNNING = $self->{log};      # Its child processes
    local $SIG{__WARN__} = $script->{warn};

    # Perl's punctuation as a new perl has it, $^T, @ARGV (ISINDEX words), its own @INC (its
    # `use lib` paths, and changes last one request); the worker's put back, $^W too, whatever
    # the script, its UNTIE or destructors set, on every way out (Executor::Globals)
    my $globals = Perennial::Executor::Globals::enter($script->{inc},
        length $env->{QUERY_STRING} ? [$self->{env}->argv($env)] : undef);

    # FindBin, when something loaded it, describes the script
    local @FindBin::{qw(Bin Script RealBin RealScript)}    ## no critic (ProhibitPackageVars)
        if $INC{'FindBin.pm'};
    Perennial::Executor::Scripts::set_findbin($script->{findbin}) if $INC{'FindBin.pm'};

    Perennial::Executor::CGIPragmas->reset($script->{cgi_pragmas});

    # A CGI.pm loaded with MOD_PERL set reads the CGI variables, as one the script loads does:
    # the same answers, without a request object made for its calls (Executor::CGIWraps)
    my $plain = $CGI::MOD_PERL && $self->{cgi_env};    ## no critic (ProhibitPackageVars)
    local (
        $Perennial::Executor::CGIWraps::PLAIN,
        $Perennial::Executor::CGIWraps::RESET,
        $Perennial::Executor::CGIWraps::OUT
    ) = $plain ? ($env, 0, $out) : ();
    my $chdir = $self->{policy}{chdir};
    Perennial::Executor::Inc::enter($script);
    my $error
        = $chdir && !chdir $hit->{dir} ? "Can't chdir to the script's directory: $!"
        : defined $script->{data} && !_open_data($script) ? "Can't open DATA: $!"
        :                                                   undef;
    my $r;

    if (!defined $error) {

        # The script's code, with its request object (mod_perl's $r) when it asks for one: its
        # error, if it had one, and the request object, if anything made it. (A block, not a
        # sub of its own: the call, with its six arguments, cost 3.3k instructions a request.)
        # Its signal handlers (Perennial::Executor::Signals) and locale are put back afterwards.
        my $signals = Perennial::Executor::Signals::snapshot($script->{signals});
        my $locale  = $script->{locale} ? POSIX::setlocale(POSIX::LC_ALL()) : undef;
        Perennial::ModPerl->begin($env, $hit, $out, $self->{site}, $phased);
        $r = $script->{request} ? Perennial::ModPerl->current : undef;
        my $file = $hit->{file};
        my $pid  = local $Perennial::Executor::Exit::IN_REQUEST = pid();

        # $0 is the script's path, a plain scalar in the glob (its END blocks see it too): perl's
        # own $0 renames the process when set (three prctl calls a request, with the put back),
        # and a script that sets it must not rename the worker
        local *0 = \(my $zero = $file);

        # Exit::run's way, written out (one call less): the bare block catches a `last`, `next`
        # or `redo` that leaves the script's code
        my ($ok, $ran) = (0, 0);
        {
            last if $ran++;    # After a redo
            $ok  = eval { $script->{code}->($r // ()); 1 };
            $ran = -1;
        }
        $error = Perennial::Executor::Exit::failure($ran, $@) unless $ok;
        Perennial::Executor::Exit->child_ends($error) if pid() != $pid;    # In a process it forked

        $self->_run_ends($script->{ends}, $file)       if @{$script->{ends}};
        Perennial::Executor::Children->give_back($out) if $out->{children};
        Perennial::Executor::CGIWraps::end_script()
            if $plain && $Perennial::Executor::CGIWraps::RESET;
        $r = Perennial::ModPerl->end;    # The request object, if anything asked for it
        Perennial::Executor::Signals::restore($signals);
        POSIX::setlocale(POSIX::LC_ALL(), $locale) if defined $locale;
    }

    my $dir = $chdir ? $hit->{dir} : $self->{home};
    my @new = Perennial::Executor::Inc::leave($script, $dir);    # What it loaded as it ran
    $self->_depends($script, $dir, @new)        if @new;
    $self->_lint_handles($script, $hit->{file}) if $script->{lint_handles};
    my $opened = close_stdout(\*STDOUT, $self->{stdout_io}, $out, $selected);
    CORE::close(*STDOUT) if $opened;    # A file the script opened on it itself
    $errors->end_request;
    Perennial::Executor::Umask::put_back($self->{umask});    # Only if a umask ran
    chdir $self->{home}      if $script->{goes_home};
    $self->_cleanup($script) if $self->{flushes};
    return ($error, $r);
}
## use critic

# The handle tied to the script's error collector (Perennial::Executor::Errors, one per script
# file), which each of its requests gets as STDERR: tied once, not for every request, and again
# only if a request untied it
sub _stderr_of ($script) {
    my $fh = $script->{stderr_handle};
    return $fh if $fh && tied *$fh;
    $fh //= Symbol::gensym();
    tie *$fh, 'Perennial::Executor::Errors', $script->{stderr};
    return $script->{stderr_handle} = $fh;
}

# Its DATA from the start, as in a new perl: the same handle opened again, not a new one, whose
# IO object would empty perl's cache of class names
sub _open_data ($script) {
    open($script->{data_in}, '<', \$script->{data}) or return 0;
    return 1;
}

# The END blocks the script declared, after each of its requests, as perl runs them at exit: one
# that dies, or leaves by `last`, `next` or `redo` (perl refuses those there), is logged and
# the others still run; one that calls exit ends only itself
sub _run_ends ($self, $ends, $file) {
    for my $end (@$ends) {
        my $err = Perennial::Executor::Exit::run($end) // next;
        $self->{log}->error("$file: END block died: $err");
    }
    return;
}

# A kept script depends on what it loaded as it ran (and the Perl status page says so)
sub _depends ($self, $script, $dir, @new) {

    # CGI.pm loaded as the script ran (require CGI): its import_names, if the script took it
    Perennial::Executor::CGIWraps::install($script->{package}) if grep { $_ eq 'CGI.pm' } @new;
    Perennial::Executor::CGICarp::install()                    if grep { $_ eq 'CGI/Carp.pm' } @new;
    Perennial::Executor::Catalog::changed()
        if $self->{keeps} && Perennial::Executor::Libraries::record($script, $dir, undef, @new);
    return;
}

# After a resident script's first request: handles it left open stay open for the next ones
sub _lint_handles ($self, $script, $file) {
    $script->first_request_done;
    my @open = Perennial::Executor::Lint::open_handles($script->{package}) or return;
    $self->{log}->warn("$file: file handle(s) @open still open after the request: under "
            . 'Registry they stay open, with their locks, until reopened or the worker exits');
}

# PerlRun: the script's package is emptied, the packages it declared itself go (ModPerl::PerlRun
# keeps those, and their globals with them), and so do the files the script required that are
# not modules
sub _cleanup ($self, $script) {
    $script->let_go;    # First, so that its subs die with their globs
    if ($self->{policy}{flush}) {
        Perennial::Executor::Compiler::empty_package($script->{package});
        Perennial::Executor::Compiler::delete_package($_) for @{$script->{packages} // []};
    }
    $script->forget_own if $self->{policy}{reset_inc};
    $self->{scripts}->ran($script) unless $self->{keeps};
    return;
}

# Scripts compile into packages named from the handler, the virtual host (as ModPerl::Registry's
# NameWithVirtualHost), the location (one segment, so a location and a path never make the
# same name) and the file: the same file under two locations, or two hosts, is two scripts,
# each with its own globals and check policy
sub _root_namespace ($name, $location, $host = undef) {
    my $root = 'Perennial::ROOT::' . $name =~ s/[^A-Za-z0-9_:]/_/gr;
    $root .= '::' . Perennial::Executor::Compiler->package_part("host $host") if defined $host;
    return $root unless defined $location;
    return "${root}::" . Perennial::Executor::Compiler->package_part($location);
}

# ModPerl::RegistryLoader's work: a script compiled in the manager is shared by every worker.
# $path is below the executor's directory; returns the error, or undef once compiled.
sub preload ($self, $path) {
    my $hit = $self->{resolver}->resolve({PATH_INFO => $path, REQUEST_URI => $path});
    return "not found below the script directory (status $hit)" unless ref $hit;
    my (undef, $err) = $self->prepare($hit);
    return $err;
}

1;

__END__

=head1 NAME

Perennial::Executor - run CGI scripts resident in the worker

=head1 SYNOPSIS

    my $registry = Perennial::Executor->new(root => '/srv/cgi-bin', log => $log,
        policy => {cache => 'mtime', flush => 0, reset_inc => 0, chdir => 1})->to_app;

=head1 DESCRIPTION

A PSGI application that runs the CGI scripts of one directory inside the worker process. The
script gets the CGI/1.1 environment, the request body on STDIN, its STDOUT parsed as CGI
output, warnings in the error log with its path, C<DATA> on every request, C<$0> set to its
path, and C<exit> that ends only the request. After each request its END blocks run and the
globals a script commonly changes (C<$/ $, $\ $" $; $@ $^W $^T @ARGV @INC>:
L<Perennial::Executor::Globals>; C<%SIG>, umask, the current directory, C<%ENV>, CGI.pm's state)
are put back. A script that dies or does not compile gets a 500 and an
error-log line with its path and line; a failed compile is tried again on the next request.
See L<Perennial::Manual::Scripts> for the whole behaviour.

=head1 METHODS

=head2 compiled

    my @scripts = $executor->compiled;    # ({file, package, handler, compiled, compile_ms, mtime})

The scripts this executor has compiled and keeps.

=head2 new

    my $executor = Perennial::Executor->new(root => $dir, log => $log, policy => \%policy,
        name => 'ModPerl::Registry', location => '/registry', check => 'always',
        exec_cgi => 1, setup_env => 1, set_env => {});

C<name> (the handler) and C<location> name the packages scripts compile into:
C<Perennial::ROOT::ModPerl::Registry::_2fregistry::srv::cgi_2dbin::hello_2epl>.

=head2 policy_of

    my $policy = Perennial::Executor->policy_of('perlrun', 1);    # {cache => 'never', ...}

The policy hash of Registry (C<registry>) or PerlRun (C<perlrun>), running scripts in their own
directory or not.

=head2 preload

    my $error = $registry->preload('/hello.pl');

Compiles a script now (in the manager, before workers fork), as ModPerl::RegistryLoader does.
The path is below the executor's directory. Returns undef, or why it did not compile.

=head2 prepare

    my ($script, $error, $status) = $executor->prepare($hit);

The compiled script for a resolved file (cached by policy); a subclass may return anything
C<respond> understands. On failure: undef, the reason for the log, and the status (500).

=head2 respond

    $executor->respond($script, $hit, $env, $responder);

Runs the script for one request and answers through the PSGI responder.

=head2 to_app

    my $app = $executor->to_app;

=cut
