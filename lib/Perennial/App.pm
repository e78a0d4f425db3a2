package Perennial::App;
use v5.36;
use Scalar::Util ();
use Perennial::App::Handlers
    qw(app_for load_applications load_handlers load_psgi where with_time_limits);
use Perennial::Config::Handlers;
use Perennial::Config::VirtualHost qw(server_name_parts);
use Perennial::Dispatch;
use Perennial::Dispatch::Warmup;
use Perennial::ErrorPage;
use Perennial::HTTP::Response ();
use Perennial::MimeTypes;
use Perennial::ModPerl;
use Perennial::RemoteIP;
use Perennial::Static;
use Perennial::VirtualHosts;
use Perennial::Walk;

# Builds the one PSGI application a server runs from the configuration: the dispatcher, which
# walks the sections per request, with what it hands requests to: PSGI files mounted at
# <Location>s, executors for script directories, the status pages and static files.
# Applications are loaded in the manager so that workers share them. $server is the hash the
# runner fills with the scoreboard and the listeners, which the status pages read.

sub build ($class, $config, $log = undef, $server = {}) {
    my $top;    # The finished application, for the executors' local redirects
    my @sections = @{$config->sections};
    unshift @sections, _command_line_app($config) if defined $config->app;
    die "Nothing to serve: give an app.psgi or a config file with <Location> blocks\n"
        unless $class->serves_something($config);
    Perennial::HTTP::Response::server_tokens($config->server_tokens);
    Perennial::ErrorPage->configure(
        admin     => $config->server_admin,
        signature => $config->server_signature,
        server    => Perennial::HTTP::Response::server_product()
    );
    my ($host, $port) = server_name_parts($config->server_name // 'localhost');
    Perennial::ModPerl::Server->configure(
        hostname => $host,
        port     => $port // 0,             # As Apache's server_rec: the port ServerName gave, or 0
        admin    => $config->server_admin,
        root     => $config->server_root,
        vars        => Perennial::Walk->merged_vars($config->server_dir->{dir_config}),
        error_fname => $config->error_log,
        log         => $log,
        limits      => {map { ($_ => $config->$_) } Perennial::ModPerl::Server->limits},
        defines     => $config->defines,
        aliases     => {map { ($_->{name} // '' => $_->{aliases} // []) } @{$config->vhosts // []}}
    );
    $log->drop_children if $log;    # A reload makes the virtual hosts' logs again
    delete $server->{log_of};       # And their log_of, if it still has hosts
    my $app = _plain_app($config, \@sections);
    if (!$app) {
        my %with = (config => $config, server => $server, top => \$top, built => {});
        $with{static} = Perennial::Static->new(types => _types($config), log => $log);
        my $main = _dispatch(
            \%with, $log,
            sections      => \@sections,
            aliases       => $config->aliases,
            document_root => $config->document_root,
            base          => [$config->server_dir]
        );
        my @hosts      = map { _host(\%with, $log, $_, \@sections) } @{$config->vhosts};
        my @dispatches = ($main, map { $_->{dispatch} } @hosts);
        Perennial::Dispatch::Warmup->preload_scripts($config->preload_scripts, $log, @dispatches);
        Perennial::Dispatch::Warmup->warm_all($log, @dispatches);
        $app = $main->to_app;

        if (@hosts) {
            my $vhosts = Perennial::VirtualHosts->new(
                hosts     => \@hosts,
                main      => $app,
                main_name => $host
            );
            $app = $vhosts->to_app;

            # A request refused before it reaches a host is logged in that host's logs
            $server->{log_of} = sub ($env) { $vhosts->log_of($env) };
        }
    }
    $app = Perennial::RemoteIP->new(
        header  => $config->remoteip_header,
        proxies => $config->remoteip_proxies
    )->wrap($app)
        if defined $config->remoteip_header;
    if ($config->environment eq 'development') {
        require Plack::Middleware::Lint;
        require Plack::Middleware::StackTrace;
        $app = Plack::Middleware::StackTrace->wrap(Plack::Middleware::Lint->wrap($app));
    }

    # What the executors reach the whole application through does not keep it alive: the
    # application holds them, and a reload must be able to let the old one go
    $top = $app;
    Scalar::Util::weaken($top);
    return $app;
}

# Whether the configuration names anything to serve (a fragment for Include may not)
sub serves_something ($class, $config) {
    return
           @{$config->sections}
        || @{$config->aliases}
        || @{$config->vhosts}
        || defined $config->document_root
        || defined $config->app ? 1 : 0;
}

# Whether a URL may map to a file (an Alias, a ScriptAlias, a DocumentRoot, a virtual host's):
# a worker of such a site watches the files it looks at (Perennial::FileWatch)
sub serves_files ($class, $config) {
    return @{$config->aliases} || @{$config->vhosts} || defined $config->document_root ? 1 : 0;
}

# What a section may hold and still need no walk: anything else (an access rule, a Perl*Handler,
# a Redirect, an ErrorDocument ...) is for the dispatcher to apply
my %PLAIN = map { $_ => 1 }
    qw(kind match path re handler app app_path id file line request_deadline slow_request_time);

# A single application for every URL, as plackup runs it: no walk at all
sub _plain_app ($config, $sections) {
    return
           if @$sections != 1
        || @{$config->aliases}
        || @{$config->vhosts}
        || defined $config->document_root
        || %{$config->server_dir};
    my $sec = $sections->[0];
    return
           if $sec->{path} ne '/'
        || ($sec->{handler} // '') ne 'psgi'
        || grep { !$PLAIN{$_} } keys %$sec;
    return with_time_limits($config, $sec, load_psgi($sec->{app_path}, where($sec)));
}

# The dispatcher of the main server or of a virtual host, with what it serves loaded now
sub _dispatch ($with, $log, %args) {
    my $config   = $with->{config};
    my $dispatch = Perennial::Dispatch->new(
        walk          => Perennial::Walk->new(sections => $args{sections}, base => $args{base}),
        aliases       => $args{aliases},
        document_root => $args{document_root},
        static        => $with->{static},
        trace         => $config->trace_enable,
        log           => $log,
        top           => $with->{top},
        build         => sub ($handler, $set, $root = undef, $phases = undef) {
            my $place = {root => $root, docroot => $args{document_root}, host => $args{host}};
            app_for($with, $log, $handler, $set, $place, $phases);
        },
    );
    _check_locations($args{sections}, $dispatch);
    load_applications($with, $args{sections});
    load_handlers($_, where($_)) for @{$args{base}}, @{$args{sections}};
    return $dispatch;
}

# A <VirtualHost>: the main server's sections then its own, its aliases before the main
# server's, its DocumentRoot, its logs (or the main server's)
sub _host ($with, $log, $host, $main_sections) {
    my $config = $with->{config};
    my $v      = $host->{values};
    my $own_log
        = $log && (defined $v->{error_log} || defined $v->{log_level} || @{$v->{custom_logs} // []})
        ? $log->child(
        error_log => $v->{error_log},
        logs      => $v->{custom_logs},
        level     => $v->{log_level}
        )
        : undef;
    my $dispatch = _dispatch(
        $with, $own_log // $log,
        sections      => [@$main_sections, @{$v->{sections} // []}],
        aliases       => [@{$v->{aliases} // []}, @{$config->aliases}],
        document_root => $v->{document_root} // $config->document_root,
        base          => [$config->server_dir, $v->{server_dir} // {}],
        host          => $host->{name} // 'default'
    );
    return {
        addrs => $host->{addrs},
        name  => $host->{name},
        port  => _host_port($config, $host),

        # Whether its requests must lose the main server's ServerName port (none of its own)
        drop_port => defined((server_name_parts($config->server_name // ''))[1]),
        aliases   => $host->{aliases},
        admin     => $v->{server_admin},
        app       => $dispatch->to_app,
        log       => $own_log,
        dispatch  => $dispatch
    };
}

# A virtual host's port, as Apache's server_rec has it (a script's SERVER_PORT when Host names
# none): its ServerName's port, or none (the scheme's) when its ServerName names none; without
# a ServerName of its own, its first address's port, else the main server's ServerName's
sub _host_port ($config, $host) {
    return $host->{port} if defined $host->{name};
    my ($port) = grep {/\A\d+\z/} map { $_->[1] } @{$host->{addrs} // []};
    return $port // (server_name_parts($config->server_name // ''))[1];
}

# The application named on the command line is a <Location /> written before the file's
sub _command_line_app ($config) {
    return {
        kind     => 'location',
        match    => 'prefix',
        path     => '/',
        handler  => 'psgi',
        app      => $config->app,
        app_path => $config->app,
        id       => 0,
        file     => 'the command line',
        line     => 0
    };
}

# A script <Location> that no Alias, ScriptAlias or DocumentRoot maps to files is a mistake
sub _check_locations ($sections, $dispatch) {
    for my $loc (grep { $_->{kind} eq 'location' && $_->{match} eq 'prefix' } @$sections) {
        next unless ($loc->{handler} // '') =~ /\A(?:perl-script|cgi-script)\z/;
        next
            if $loc->{handler} eq 'perl-script'
            && !Perennial::Config::Handlers::handler_policy($loc->{response_handler} // '');
        next if $dispatch->translates($loc->{path});
        die "$loc->{file} line $loc->{line}: no Alias, ScriptAlias or DocumentRoot maps "
            . "<Location $loc->{path}> to a directory\n";
    }
}

# Debian's table unless TypesConfig names another
sub _types ($config) {
    my $file = $config->types_config // (-f '/etc/mime.types' ? '/etc/mime.types' : undef);
    return Perennial::MimeTypes->new(file => $file);
}

1;

__END__

=head1 NAME

Perennial::App - the PSGI application a configuration describes

=head1 SYNOPSIS

    my $app = Perennial::App->build($config, $log);

=head1 DESCRIPTION

Loads every C<PSGIApp> of the configuration's C<< <Location> >> blocks (and the application
file given on the command line, as a C<< <Location /> >> written first) with
L<Plack::Util/load_psgi>, and puts them behind L<Perennial::Dispatch>, which walks the
sections for each request and builds the executors for script directories as requests
(or C<PerlPreloadScripts>) need them. An application file alone, with nothing else
configured, is served as it is, with no walk at all.

A C<< <Location> >> with C<SetHandler perl-script> or C<cgi-script> must be covered by an
C<Alias>, a C<ScriptAlias> or C<DocumentRoot>; otherwise the start stops with its line.

With C<-E development> the application is wrapped in L<Plack::Middleware::Lint> and
L<Plack::Middleware::StackTrace>, as plackup does.

=head1 METHODS

=head2 serves_something

    my $yes = Perennial::App->serves_something($config);

=head2 build

    my $app = Perennial::App->build($config, $log);

Dies with a message naming the config file and line when something cannot be built.

=cut
