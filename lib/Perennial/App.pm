package Perennial::App;
use v5.36;
use File::Find   ();
use Cwd          ();
use Plack::Util  ();
use Scalar::Util ();
use Perennial::Access;
use Perennial::Config::Sections qw(handler_policy);
use Perennial::Executor;
use Perennial::Executor::CGI;
use Perennial::Router;
use Perennial::Status;
use Perennial::Status::Perl;
use Perennial::Watchdog;

# Builds the one PSGI application a server runs from the configuration: PSGI files mounted at
# <Location>s, script directories (Alias, ScriptAlias, DocumentRoot) run by an executor
# chosen by SetHandler and PerlResponseHandler, and the status pages, all behind the Router.
# Applications are loaded in the manager so that workers share them. $server is the hash the
# runner fills with the scoreboard and the listeners, which the status pages read.

sub build ($class, $config, $log = undef, $server = {}) {
    my $top;    # The finished application, for the executors' local redirects
    my (@routes, @registries);
    for my $sec (grep { ($_->{handler} // '') eq 'psgi' } @{$config->sections}) {
        my $app = _load($sec->{app_path}, "$sec->{file} line $sec->{line}: ");
        push @routes, [$sec->{path}, _guard($sec, _time_limits($config, $sec, $app), $log)];
    }
    for my $sec (grep { ($_->{handler} // '') =~ /status\z/ } @{$config->sections}) {
        my $status
            = $sec->{handler} eq 'server-status'
            ? Perennial::Status->new(server => $server)
            : Perennial::Status::Perl->new(server => $server, config => $config);
        push @routes, [$sec->{path}, _guard($sec, $status->to_app, $log, 'local')];
    }
    push @routes, _script_mounts($config, $log, \$top, \@registries);
    push @routes, ['/', _time_limits($config, {}, _load($config->app, ''))] if defined $config->app;
    die "Nothing to serve: give an app.psgi or a config file with <Location> blocks\n"
        unless @routes;
    my $app = Perennial::Router->new(routes => \@routes)->to_app;
    if ($config->environment eq 'development') {
        require Plack::Middleware::Lint;
        require Plack::Middleware::StackTrace;
        $app = Plack::Middleware::StackTrace->wrap(Plack::Middleware::Lint->wrap($app));
    }
    _preload_scripts($config, $log, \@registries);
    return $top = $app;
}

# The executor for one mount, from its merged settings; Registry ones are noted for preloading
sub _executor ($config, $log, $top, $url, $dir, $set, $registries) {
    my $executor = _new_executor($config, $log, $top, $url, $dir, $set);
    push @$registries, [$executor, $dir, $set->{response_handler}]
        if $set->{handler} ne 'cgi-script'
        && handler_policy($set->{response_handler})->{mode} eq 'registry';
    return _time_limits($config, $set, $executor->to_app);
}

sub _new_executor ($config, $log, $top, $url, $dir, $set) {
    my %common = (
        root     => $dir,
        location => $url || '/',
        log      => $log,
        dispatch => $top,
        exec_cgi => $set->{exec_cgi} // 0,
        set_env  => {
            %{$config->set_env},
            %{$set->{set_env} // {}},
            $config->passed_env(@{$config->pass_env}, @{$set->{pass_env} // []})
        },
        document_root => $config->document_root // $dir,
    );
    if ($set->{handler} eq 'cgi-script') {
        return Perennial::Executor::CGI->new(%common, name => 'CGI', timeout => $config->timeout);
    }
    my $name   = $set->{response_handler};
    my $policy = handler_policy($name);
    my $run
        = $policy->{mode} eq 'registry'
        ? {cache => 'mtime', flush => 0, reset_inc => 0}
        : {cache => 'never', flush => 1, reset_inc => 1};
    return Perennial::Executor->new(
        %common,
        name      => $name,
        policy    => {%$run, chdir => $policy->{chdir}},
        check     => $set->{script_check} // $policy->{check} // 'always',
        setup_env => $set->{setup_env}    // $config->setup_env
    );
}

sub _load ($path, $where) {
    die "${where}Can't load PSGI application \"$path\": no such file\n" unless -f $path;
    my $app = eval { Plack::Util::load_psgi($path) };
    die "${where}Can't load PSGI application \"$path\": " . ($@ =~ s/\s+\z//r) . "\n" if !$app;
    die "${where}PSGI application \"$path\" did not return a code reference\n"
        if ref $app ne 'CODE' && !(Scalar::Util::blessed($app) && $app->can('to_app'));
    return ref $app eq 'CODE' ? $app : $app->to_app;
}

# The directory a URL path maps to: the longest Alias or ScriptAlias, else DocumentRoot
sub _map_url ($config, $url) {
    my ($best, $rest);
    for my $alias (@{$config->aliases}) {
        (my $prefix = $alias->{url}) =~ s{/+\z}{};
        next unless $url eq $prefix || index($url, "$prefix/") == 0;
        next if $best && length $best->{url} >= length $alias->{url};
        ($best, $rest) = ($alias, substr $url, length $prefix);
    }
    return $best->{dir} . $rest          if $best;
    return $config->document_root . $url if defined $config->document_root;
    return;
}

# Settings for a directory: every <Directory> that is it or above it, outermost first
sub _dir_settings ($config, $dir) {
    my %set;
    my @dirs = sort { length $a->{path} <=> length $b->{path} }
        grep { my $p = $_->{path} =~ s{/+\z}{}r; $dir eq $p || index($dir, "$p/") == 0 }
        grep { $_->{kind} eq 'directory' } @{$config->sections};
    _merge(\%set, $_) for @dirs;
    return \%set;
}

sub _merge ($set, $sec) {
    for my $key (
        qw(handler response_handler exec_cgi setup_env script_check request_deadline slow_request_time
        require)
        )
    {
        $set->{$key} = $sec->{$key} if defined $sec->{$key};
    }
    $set->{set_env}  = {%{$set->{set_env}  // {}}, %{$sec->{set_env} // {}}};
    $set->{pass_env} = [@{$set->{pass_env} // []}, @{$sec->{pass_env} // []}];
}

# PerlPreloadScripts DIR: every script below DIR (a .pl or .cgi file, or an executable one; not
# dot files) compiled now by each Registry location serving it, so workers fork with the
# compiled code (ModPerl::RegistryLoader)
sub _preload_scripts ($config, $log, $registries) {
    for my $want (@{$config->preload_scripts}) {
        my $real = Cwd::realpath($want)
            // die "PerlPreloadScripts: Can't find directory \"$want\"\n";
        my @serving = grep {
            my $root = Cwd::realpath($_->[1]) // '';
            $real eq $root || index($real, "$root/") == 0
        } @$registries;
        die "PerlPreloadScripts $want: no Registry location serves this directory\n"
            unless @serving;
        for my $r (@serving) {
            my $root = Cwd::realpath($r->[1]);
            my ($done, @failed) = (0);
            for my $file (_files($real)) {
                my $err = $r->[0]->preload(substr $file, length $root);
                if ($err) {
                    push @failed, $file;
                    $log->warn("PerlPreloadScripts: $file: $err") if $log;
                }
                else { $done++ }
            }
            $log->info("PerlPreloadScripts $want: $done scripts compiled for $r->[2]"
                    . (@failed ? ', ' . @failed . ' did not compile' : ''))
                if $log;
        }
    }
}

sub _files ($dir) {
    my @files;
    File::Find::find(
        {   no_chdir => 1,
            wanted   => sub {
                return $File::Find::prune = 1 if m{/\.[^/]*\z} && $_ ne $dir;
                push @files, $_ if -f $_ && (/\.(?:pl|cgi)\z/ || -x _);
            }
        },
        $dir
    );
    my @sorted = sort @files;
    return @sorted;
}

# A section's Require lines (a status page without any: Require local)
sub _guard ($sec, $app, $log, $default = undef, $where = undef) {
    my $rules = $sec->{require} // ($default ? [Perennial::Access->parse($default)] : undef);
    return $app unless $rules;
    $where //= "$sec->{file} line $sec->{line}";
    $where .= ', Require local by default' unless $sec->{require};
    return Perennial::Access->wrap($rules, $app, $log, $where);
}

# RequestDeadline and SlowRequestTime of a location, or else the server's, for the watchdog
sub _time_limits ($config, $set, $app) {
    my $deadline = $set->{request_deadline}  // $config->request_deadline;
    my $slow     = $set->{slow_request_time} // $config->slow_request_time;
    return $app unless $deadline || $slow;
    return sub ($env) { Perennial::Watchdog::arm($deadline, $slow); $app->($env) };
}

sub _script_mounts ($config, $log, $top, $registries) {
    my (@routes, %mounted);
    my @locations
        = grep { $_->{kind} eq 'location' && ($_->{handler} // 'psgi') !~ /\Apsgi\z|status\z/ }
        @{$config->sections};
    for my $loc (@locations) {
        my $where = "$loc->{file} line $loc->{line}";
        (my $url = $loc->{path}) =~ s{/+\z}{};
        my $dir = _map_url($config, $url);
        die
            "$where: no Alias, ScriptAlias or DocumentRoot maps <Location $loc->{path}> to a directory\n"
            unless defined $dir;
        my $set = _dir_settings($config, $dir);
        _merge($set, $loc);
        push @routes,
            [
            $url || '/',
            _guard(
                $set, _executor($config, $log, $top, $url, $dir, $set, $registries),
                $log, undef, $where
            )
            ];
        $mounted{$url} = 1;
    }
    for my $alias (@{$config->aliases}) {
        (my $url = $alias->{url}) =~ s{/+\z}{};
        next if $mounted{$url}++;
        my $set = _dir_settings($config, $alias->{dir} =~ s{/+\z}{}r);
        %$set = (%$set, handler => 'cgi-script', exec_cgi => 1) if $alias->{script};
        my $where = "$alias->{file} line $alias->{line}";
        die
            "$where: nothing handles $alias->{url}: Perennial runs scripts and PSGI applications, not static "
            . "files; add a <Location> or <Directory> with SetHandler\n"
            unless $set->{handler};
        my $app = _executor($config, $log, $top, $url, $alias->{dir}, $set, $registries);
        push @routes, [$url || '/', _guard($set, $app, $log, undef, $where)];
    }
    return @routes;
}

1;

__END__

=head1 NAME

Perennial::App - the PSGI application a configuration describes

=head1 SYNOPSIS

    my $app = Perennial::App->build($config, $log);

=head1 DESCRIPTION

Loads every C<PSGIApp> of the configuration's C<< <Location> >> blocks (and the application
file given on the command line, mounted at C</>) with L<Plack::Util/load_psgi>, builds an
executor for every script location, and puts them all behind L<Perennial::Router>.

A script location is a C<< <Location> >> with C<SetHandler perl-script> or C<cgi-script>, whose
directory comes from the longest C<Alias>/C<ScriptAlias> covering its path (or
C<DocumentRoot>), or an C<Alias>/C<ScriptAlias> by itself (C<ScriptAlias> means C<cgi-script>
with ExecCGI on; a plain C<Alias> needs a C<< <Directory> >> that sets the handler). Settings
of C<< <Directory> >> blocks for that directory apply first, then the C<< <Location> >>'s, as
in Apache. C<Options +ExecCGI> is needed, as in Apache, or the scripts answer 403.

With C<-E development> the application is wrapped in L<Plack::Middleware::Lint> and
L<Plack::Middleware::StackTrace>, as plackup does.

=head1 METHODS

=head2 build

    my $app = Perennial::App->build($config, $log);

Dies with a message naming the config file and line when something cannot be built.

=cut
