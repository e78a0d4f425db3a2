package Perennial::App::Handlers;
use v5.36;
use Exporter     qw(import);
use Plack::Util  ();
use Scalar::Util ();
use Perennial::Config::Handlers;
use Perennial::Executor;
use Perennial::Executor::CGI;
use Perennial::Executor::Environment;
use Perennial::Executor::Handler;
use Perennial::ModPerl::Handler;
use Perennial::Status;
use Perennial::Status::Health;
use Perennial::Status::Perl;
use Perennial::Watchdog;

our @EXPORT_OK = qw(app_for load_applications load_handlers load_psgi where with_time_limits);

# What serves each handler the configuration names, made for Perennial::App: the PSGI
# applications and status pages, loaded in the manager (so that the workers share them and a
# broken one stops the start), the mod_perl handler modules, found there too, and the
# executors of script directories and handler modules, made for the dispatcher's sets of
# merged settings. $with is App's: the configuration, the server hash the status pages read,
# the finished application (for local redirects) and what was built already.

# Where a section was written, to begin a message with (nothing for the command line's app)
sub where ($sec) { $sec->{line} ? "$sec->{file} line $sec->{line}: " : '' }

# Every PSGI application and status page is made now, in the manager, so that workers share
# them and a broken one stops the start
sub load_applications ($with, $sections) {
    my $built = $with->{built};
    for my $sec (@$sections) {
        my $h = $sec->{handler} // '';
        $built->{"app $sec->{app_path}"} //= load_psgi($sec->{app_path}, where($sec))
            if defined $sec->{app_path};
        $built->{$h} //= _status_app($with->{config}, $with->{server}, $h)
            if $h =~ /status\z|\Aserver-health\z/;
    }
}

# The mod_perl handlers a section names are found now, in the manager, their modules loaded
# (and shared by the workers); one that leads nowhere stops the start
sub load_handlers ($sec, $where) {
    for my $key (grep { $sec->{$_} } Perennial::Config::Handlers::phase_keys()) {
        my $directive = Perennial::Config::Handlers::directive_of($key);
        my $at        = $sec->{handler_at}{lc $directive} // $where;
        for my $name (@{$sec->{$key}}) {
            eval { Perennial::ModPerl::Handler->resolve($name); 1 }
                or die "$at$directive $name: $@";
        }
    }
}

# A status page, reading what the runner puts in $server (the scoreboard, the listeners)
sub _status_app ($config, $server, $handler) {
    return Perennial::Status->new(server => $server)->to_app         if $handler eq 'server-status';
    return Perennial::Status::Health->new(server => $server)->to_app if $handler eq 'server-health';
    return Perennial::Status::Perl->new(server => $server, config => $config)->to_app;
}

# What serves a set of merged settings: the PSGI application or status page (loaded at start),
# or an executor for the scripts below a root
# $place: the root the URL maps into, the DocumentRoot and the virtual host of the dispatcher
sub app_for ($with, $log, $handler, $set, $place, $phases) {
    my ($config, $built) = @$with{qw(config built)};
    if ($handler eq 'psgi') {
        my $app = $built->{"app $set->{app_path}"} //= load_psgi($set->{app_path}, '');
        return with_time_limits($config, $set, $app);
    }
    return $built->{$handler} //= _status_app($config, $with->{server}, $handler)
        if $handler =~ /status\z|\Aserver-health\z/;

    # mod_cgi runs what a ScriptAlias maps to without Options ExecCGI
    my %set  = (%$set, handler => $handler);
    my $root = $place->{root};
    $set{exec_cgi} = 1 if $root && $root->{script} && $handler eq 'cgi-script';
    my %common = _common($config, \%set, $place->{docroot} // $config->document_root);
    if ($phases) {
        return Perennial::Executor::Handler->new(
            %common,
            phases    => $phases,
            handler   => $handler,
            root      => $root ? $root->{dir} : $common{document_root},
            setup_env => $set{setup_env} // $config->setup_env
        );
    }
    return _new_executor(
        $config, \%set, %common,
        root     => $root->{dir},
        location => $root->{url} || '/',
        log      => $log,
        dispatch => $with->{top},
        host     => $place->{host}
    );
}

# What every executor of a set of merged settings is made with: its time limits, PerlSetVar,
# and what its CGI variables are made from
sub _common ($config, $set, $docroot) {
    return (
        limits     => _limits($config, $set),
        set        => $set,                     # What the request object reads (AuthName ...)
        dir_config => $set->{dir_config},
        pass_auth  => $set->{pass_auth},
        set_env    => {    # The server level's are in $set already: it is merged onto them
            %{$set->{set_env} // {}}, $config->passed_env(@{$set->{pass_env} // []})
        },
        perl_env => {      # PerlSetEnv and PerlPassEnv, which PerlSetupEnv Off keeps
            Perennial::Executor::Environment->perl_vars($set)
        },
        document_root => $docroot,
    );
}

# A script directory's executor: mod_cgi, or Registry/PerlRun as the handler's policy says
sub _new_executor ($config, $set, %args) {
    $args{document_root} //= $args{root};
    $args{exec_cgi} = $set->{exec_cgi} // 0;
    if ($set->{handler} eq 'cgi-script') {
        return Perennial::Executor::CGI->new(%args, name => 'CGI', timeout => $config->timeout);
    }
    my $name   = $set->{response_handler};
    my $policy = Perennial::Config::Handlers::handler_policy($name);
    return Perennial::Executor->new(
        %args,
        name      => $name,
        policy    => Perennial::Executor->policy_of(@$policy{qw(mode chdir)}),
        check     => $set->{script_check} // $policy->{check} // 'always',
        setup_env => $set->{setup_env}    // $config->setup_env
    );
}

# A PSGI file's application; a file that is not there, does not compile or returns no
# application stops the start, with where it was named
sub load_psgi ($path, $where) {
    die "${where}Can't load PSGI application \"$path\": no such file\n" unless -f $path;
    my $app = eval { Plack::Util::load_psgi($path) };
    die "${where}Can't load PSGI application \"$path\": " . ($@ =~ s/\s+\z//r) . "\n" if !$app;
    die "${where}PSGI application \"$path\" did not return a code reference\n"
        if ref $app ne 'CODE' && !(Scalar::Util::blessed($app) && $app->can('to_app'));
    return ref $app eq 'CODE' ? $app : $app->to_app;
}

# RequestDeadline and SlowRequestTime of a set, or else the server's: [deadline, slow], or
# nothing when neither is on
sub _limits ($config, $set) {
    my $deadline = $set->{request_deadline}  // $config->request_deadline;
    my $slow     = $set->{slow_request_time} // $config->slow_request_time;
    return $deadline || $slow ? [$deadline, $slow] : undef;
}

# The application armed with those limits for the watchdog, as each request begins
sub with_time_limits ($config, $set, $app) {
    my $limits = _limits($config, $set) or return $app;
    return sub ($env) { Perennial::Watchdog::arm_for($env, $limits); $app->($env) };
}

1;

__END__

=head1 NAME

Perennial::App::Handlers - what serves each handler a configuration names

=head1 SYNOPSIS

    use Perennial::App::Handlers qw(app_for load_applications load_handlers where);
    load_applications($with, \@sections);          # PSGIApp files and status pages, now
    load_handlers($_, where($_)) for @sections;    # Perl*Handler modules, now
    my $app = app_for($with, $log, $handler, $set, $place, $phases);

=head1 DESCRIPTION

Perennial::App builds the dispatchers; this module makes what they hand requests to. Every
C<PSGIApp> file and status page is loaded in the manager, once whatever number of sections
names it; every mod_perl handler a section names is resolved there, its module loaded; a
failure stops the start with the file and line of the section. Executors (mod_cgi's,
Registry's or PerlRun's for a script directory, or a handler module's) are made for each set
of merged settings the dispatcher asks for, with the settings' time limits, PerlSetVar and
environment.

=head1 FUNCTIONS

=head2 app_for

    my $app = app_for($with, $log, $handler, $set, $place, $phases);

The application for a set of merged settings: its PSGI application or status page (loaded
already), a handler module's executor when C<$phases> is given, else a script directory's
executor. C<$place> holds the root the URL maps into, the DocumentRoot and the virtual host.

=head2 load_applications

    load_applications($with, \@sections);

Loads each section's PSGI application and makes each status page, once.

=head2 load_handlers

    load_handlers($section, $where);

Resolves every mod_perl handler the section names (loading its module); dies with C<$where>
and the directive when one cannot be found.

=head2 load_psgi

    my $app = load_psgi($path, $where);

A PSGI file's application (a code reference, or an object's C<to_app>); dies with C<$where>
and the reason.

=head2 where

    my $prefix = where($section);    # "site.conf line 12: "

Where a section was written, to begin a message with (nothing for the command line's
application).

=head2 with_time_limits

    my $app = with_time_limits($config, $set, $app);

The application armed with its C<RequestDeadline> and C<SlowRequestTime> for the watchdog,
or the application itself when neither is on.

=head1 SEE ALSO

L<Perennial::App>, L<Perennial::Dispatch>, L<Perennial::Executor>.

=cut
