package Perennial::Preload;
use v5.36;
use Perennial::Config::Handlers;
use Perennial::Executor::Environment;
use Perennial::Executor::Inc;
use Perennial::ModPerl;
use Perennial::ModPerl::Handler;
use Perennial::ServerEnv;

# What the manager loads before workers fork, so that they share it copy-on-write: -I
# directories, PerlRequire files and PerlModule modules, and the PerlChildInitHandler and
# PerlChildExitHandler subs. On a graceful restart it runs again: PerlRequire files run again,
# and modules loaded from outside perl's own directories whose file changed are loaded again.

my $NAME = qr/\A\w+(?:::\w+)*\z/;

sub new ($class, %args) { bless {log => $args{log}, mtimes => {}}, $class }

# Loads what the config names; returns the worker hooks {init => [...], exit => [...]}. $plack:
# the server's own application is a PSGI one given as plackup gives it (on the command line, or
# by plackup -s Perennial), which keeps the environment it was started with
sub load ($self, $config, $plack = defined $config->app) {
    my %seen = map { $_ => 1 } @INC;
    unshift @INC, grep { !$seen{$_} } @{$config->includes};

    # PerlSwitches -w: warnings on for the whole server, as perl -w
    $^W = 1 if $config->perl_warnings;    ## no critic (RequireLocalizedPunctuationVars)
    my $again = $self->{loaded}++;
    my $log   = $self->{log};

    # Loading again redefines subs: that is the point, not news
    local $SIG{__WARN__} = sub ($msg) {
        $log->warn($msg) if $log && !($again && $msg =~ /\ASubroutine \S+ redefined /);
    };

    # The environment the code gets, as mod_perl's start makes it: the server level's
    # PerlSetEnv and PerlPassEnv variables, PATH, TZ and TMPDIR, and nothing else of what the
    # server was started with (Perennial::ServerEnv; all of it for a PSGI application named on
    # the command line, as plackup's); each request's own variables come and go over it
    # (Perennial::Executor::Environment). And what mod_perl 2 tells the code it loads: Apache::DBI
    # looks at the API version, and DBI sends connections through Apache::DBI only if MOD_PERL is
    # set when it loads. MOD_PERL is set only while the start-up code loads (a CGI.pm loaded then
    # works through $r, as under mod_perl); scripts compiled later see the CGI environment, as
    # under mod_cgi. MOD_PERL is in perl's %ENV only, as mod_perl keeps it (a child process does
    # not see it), until the worker hooks' modules have loaded too; see mark_env.
    # MOD_PERL_API_VERSION is set for good, in the C environment too: a script's `local %ENV`
    # would put a variable of perl's %ENV alone there when it is undone, so whether a child saw
    # it would depend on what the worker served before.
    Perennial::ServerEnv::give_code(
        {   Perennial::Executor::Environment->perl_vars($config->server_dir // {}),
            MOD_PERL_API_VERSION => 2
        },
        $plack    # A PSGI application of plackup's way keeps it all
    );
    my $marked = Perennial::ModPerl::mark_env();
    my $hooks  = eval { $self->_load_code($config, $again) };
    Perennial::Executor::Environment::delete_perl_only('MOD_PERL') if $marked;
    die $@ unless $hooks;
    Perennial::Executor::Environment->keep_base;    # What the start-up code left in it too
    return $hooks;
}

# The PerlRequire files and PerlModule modules, run and loaded (again: what changed since), and
# the worker hooks they name: {init => [...], exit => [...]}
sub _load_code ($self, $config, $again) {
    $self->_refresh if $again;
    Perennial::ModPerl::Handler->forget;
    Perennial::ModPerl::Server->forget_pushed;
    for my $file (@{$config->requires}) {
        my $ok = do $file;
        die "Can't load PerlRequire file $file: "
            . ($@ || $! || 'it did not return a true value') . "\n"
            unless $ok;
    }
    _require($_) for grep { $self->_loadable($_) } @{$config->modules};
    $self->{mtimes} = {
        map { $_ => (stat $INC{$_})[9] }
            grep {
                   defined $INC{$_}
                && !ref $INC{$_}
                && !m{\A(?:Perennial|Plack/Handler/Perennial)\b}
                && !Perennial::Executor::Inc::perls_own($INC{$_})
            }
            keys %INC
    };

    # The worker hooks' modules load here too, with MOD_PERL set
    return {
        init => [
            (map { _handler($_, 'PerlChildInitHandler') } @{$config->child_init}),
            Perennial::ModPerl::Server->pushed('PerlChildInitHandler')
        ],
        exit => [
            (map { _handler($_, 'PerlChildExitHandler') } @{$config->child_exit}),
            Perennial::ModPerl::Server->pushed('PerlChildExitHandler')
        ],
    };
}

# Runs a worker's hooks; a hook that dies is logged, and the worker goes on
sub run_hooks ($self, $hooks, $directive, $worker) {
    return unless @$hooks;    # Most sites have none: nothing to call, no pages copied
    my %about = (%$worker, pid => $$);
    Perennial::ModPerl->run_phase($directive, $self->{log}, [map { [@$_, {%about}] } @$hooks]);
    return;
}

# A worker hook, found as mod_perl finds handlers (Perennial::ModPerl::Handler)
sub _handler ($name, $directive) {
    my $handler = eval { Perennial::ModPerl::Handler->resolve($name) }
        or die "$directive '$name': $@";
    return [$name, $handler->{code}] unless defined $handler->{class};
    return [$name, sub (@args) { Perennial::ModPerl::Handler->call($handler, @args) }];
}

sub _refresh ($self) {
    for my $key (sort keys %{$self->{mtimes}}) {
        my $path = $INC{$key} // next;
        next if ((stat $path)[9] // 0) == $self->{mtimes}{$key};
        delete $INC{$key};
        eval { require $key; 1 } or do {
            $INC{$key} = $path;    ## no critic (RequireLocalizedPunctuationVars) as it was
            die "$path changed and does not load: " . ($@ =~ s/\s+\z//r) . "\n";
        };
        $self->{log}->info("$path changed: loaded again for the new generation");
    }
}

# A PerlModule is loaded unless Perennial provides it (its request object's classes, the
# Registry handlers) or it is mod_perl's own (ModPerl::, Apache2::, APR::), which needs Apache
# around it; those are said once in the log. Anything else must load, or the start stops.
sub _loadable ($self, $module) {
    my $log = $self->{log};
    return 0 if $INC{_file_of($module)} || Perennial::Config::Handlers::handler_policy($module);
    return 1 unless $module =~ /\A(?:ModPerl|Apache2|APR)::/;
    $log->info("PerlModule $module not loaded: it is mod_perl's own and works only inside Apache")
        if $log && !$self->{said}{$module}++;
    return 0;
}

sub _require ($module) {
    die "Can't load module '$module': not a module name\n" unless $module =~ $NAME;
    my $file = _file_of($module);
    eval { require $file; 1 }
        or die "PerlModule $module: Can't load it: " . ($@ =~ s/\s+\z//r) . "\n";
}

sub _file_of ($module) { ($module =~ s{::}{/}gr) . '.pm' }

1;

__END__

=head1 NAME

Perennial::Preload - load code in the manager before workers fork, and again on a graceful restart

=head1 SYNOPSIS

    my $preload = Perennial::Preload->new(log => $log);
    my $hooks = $preload->load($config);
    # in each worker
    $preload->run_hooks($hooks->{init}, PerlChildInitHandler => {slot => 0, generation => 1});

=head1 DESCRIPTION

Adds the C<-I> directories to C<@INC>, runs each C<PerlRequire> file (C<startup.pl>) and loads
each C<PerlModule> (mod_perl's own names, ModPerl:: and Apache::, are built in and skipped).
Code loaded here is compiled once, in the manager, and every worker shares its pages until it
writes to them.

Called again on a graceful restart: C<PerlRequire> files run again (their "redefined" warnings
are not logged) and every module loaded from outside perl's own directories whose file changed
since is loaded again, so the new generation forks with the new code. A file that no longer
compiles makes the restart fail: the running generation keeps serving. Perennial's own modules
are not reloaded in a running manager: a new Perennial needs C<perennial upgrade>.

C<PerlChildInitHandler> and C<PerlChildExitHandler> name subs, C<My::Hooks> meaning
C<My::Hooks::handler> as in mod_perl, or C<My::Hooks::start> itself; the module is loaded if it
is not yet. Each worker calls its init hooks after it forked and before it accepts, and its exit
hooks when it ends normally (not when it is killed or stopped by a request deadline), with one
argument: C<< {pid, slot, generation} >>.

=head1 METHODS

=head2 load

    my $hooks = $preload->load($config);    # {init => [...], exit => [...]}

=head2 new

    my $preload = Perennial::Preload->new(log => $log);

=head2 run_hooks

    $preload->run_hooks($hooks->{exit}, PerlChildExitHandler => $worker);

A hook that dies is logged with its name and the worker goes on.

=cut
