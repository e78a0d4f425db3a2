package Perennial::Config;
use v5.36;
use Carp       qw(croak);
use Cwd        ();
use File::Spec ();
use Perennial::Access;
use Perennial::Config::Apache;
use Perennial::Config::Conditional qw(expand);
use Perennial::Config::Ignored     ();
use Perennial::Config::Logs        qw(log_directive resolve_logs);
use Perennial::Config::PerDir      qw(per_dir_directive);
use Perennial::Config::VirtualHost qw(virtual_host);
use Perennial::Config::Sections    qw(section server_directive shadowed);
use Perennial::ServerEnv;
use Perennial::Config::Settings
    qw(apache_level check_setting is_setting setting_default setting_directive setting_keys setting_level);

my $MAX_SERVER_LIMIT = 20_000;

for my $key (setting_keys()) {
    no strict 'refs';    ## no critic (ProhibitNoStrict) one-line accessors, generated
    *{$key} = sub ($self) { $self->{$key} };
}

# Perennial::Config::kilobytes and ->level_of, as they were before the table moved
sub kilobytes ($value) { Perennial::Config::Settings::kilobytes($value) }

# Perennial's level for one of Apache's (emerg ... debug, trace1 ... trace8)
sub level_of ($class, $apache) { apache_level($apache) }

sub load ($class, %args) {
    my $file = $args{file};
    my $over = {%{$args{overrides} // {}}};    # A copy: the log level is put in its own words
    my (%values, @errors);
    Perennial::Access->forget_providers;       # Registered again as this reading finds them
    my $ctx = {
        defines     => {map { $_ => '' } @{$args{defines} // []}},
        env         => Perennial::ServerEnv::started(),              # As the server was started
        server_root => Cwd::getcwd(),
        notes       => []
    };
    if (defined $file) {
        my $path = File::Spec->rel2abs($file);
        my ($items, $syntax) = Perennial::Config::Apache->parse_file($path);
        push @errors, @$syntax;
        %values = (source => $path, server_root => (File::Spec->splitpath($path))[1] =~ s{/\z}{}r);
        $ctx->{server_root} = $values{server_root};
        _apply_items(\%values, \@errors, expand($items, \@errors, $ctx));
    }

    # Directives given on the command line (--set), after the file's, as if it ended with them
    for my $line (@{$args{directives} // []}) {
        my ($items, $syntax)
            = Perennial::Config::Apache->parse_string($line =~ /\s/ ? $line : $line =~ s/=/ /r,
            "--set '$line'");
        push @errors, @$syntax;
        push @errors, "--set '$line': only one directive, not a section"
            if grep { $_->{section} } @$items;
        _apply_items(\%values, \@errors, expand([grep { !$_->{section} } @$items], \@errors, $ctx));
    }
    push @{$values{notes}}, @{$ctx->{notes}}, shadowed($values{sections} // []);
    $values{defines} = [sort keys %{$ctx->{defines}}];    # -D and Define, as exists_config_define
    resolve_logs(\%values, \@errors);
    _host_logs(\%values, \@errors);
    for my $host (map { $_->{values} } @{$values{vhosts} // []}) {    # Said for the server
        push @{$values{notes}}, @{$host->{notes} // []}, shadowed($host->{sections} // []);
    }

    # SetEnv, PassEnv and PerlSetupEnv at server level are also the server's own settings
    my $base = $values{server_dir} // {};
    $values{$_} = $base->{$_} for grep { defined $base->{$_} } qw(set_env pass_env setup_env);
    die join("\n", @errors) . "\n"                         if @errors;
    $over->{log_level} = setting_level($over->{log_level}) if defined $over->{log_level};
    for my $key (sort keys %$over) {
        my $err = check_setting($key, $over->{$key});
        push @errors, "--" . ($key =~ tr/_/-/r) . " $err" if $err;
        $values{$key} = $over->{$key};
    }
    die join("\n", @errors) . "\n" if @errors;
    my $config = $class->new(%values);

    @errors = _missing($config);
    die join("\n", @errors) . "\n" if @errors;
    return $config;
}

sub new ($class, %args) {
    my @unknown = grep { !is_setting($_) } sort keys %args;
    croak "Unknown config key(s) @unknown; valid keys: @{[sort(setting_keys())]}" if @unknown;
    my @errors = map { my $e = check_setting($_, $args{$_}); $e ? "$_ $e" : () } sort keys %args;
    croak join('; ', @errors) if @errors;
    my $self = bless {map { $_ => $args{$_} // setting_default($_) } setting_keys()}, $class;
    $self->{server_root} //= Cwd::getcwd();
    $self->_normalise;
    return $self;
}

# The values of PassEnv/PerlPassEnv variables in the server's environment
sub passed_env ($self, @names) {
    my $env = Perennial::ServerEnv::started();
    return map { ($_ => $env->{$_}) } grep { defined $env->{$_} } @names;
}

sub path ($self, $path) {
    return unless defined $path;
    return $path if $path eq '-' || File::Spec->file_name_is_absolute($path);
    return File::Spec->catfile($self->{server_root}, $path);
}

# Every setting with its value, for the Perl status view
sub settings ($self) {
    return {map { $_ => $self->{$_} } setting_keys()};
}

sub warnings ($self) { @{$self->{_warnings} // []} }

sub with ($self, %override) {
    my %values = map { $_ => $self->{$_} } setting_keys();
    return ref($self)->new(%values, %override);
}

sub _apply_items ($values, $errors, $items) {
    for my $item (@$items) {
        if ($item->{section}) {
            if (lc $item->{section} eq 'virtualhost') {
                virtual_host($values, $errors, $item, \&_host_directive);
            }
            else { section($values, $errors, $item) }
            next;
        }
        my $err = Perennial::Config::Ignored::ignored($values, $item)
            // server_directive($values, $item) // log_directive($values, $item)
            // setting_directive($values, $item);
        push @$errors, "$item->{file} line $item->{line}: $err" if $err;
    }
}

# A directive inside a <VirtualHost>: one of those a host may have ($own), or a per-directory one
# at the host's level; anything else is the whole server's
sub _host_directive ($host, $item, $own) {
    my $err = Perennial::Config::Ignored::ignored($host, $item);
    return $err if defined $err;
    return server_directive($host, $item) // log_directive($host, $item)
        // setting_directive($host, $item)
        if $own;
    $err = per_dir_directive($host->{server_dir} //= {}, $item, 'server');
    return $err // "$item->{name} cannot be inside <VirtualHost>: it is the whole server's";
}

# Each virtual host's logs, with the main server's formats and its own
sub _host_logs ($values, $errors) {
    for my $host (@{$values->{vhosts} // []}) {
        my $v = $host->{values};
        $v->{log_formats} = {%{$values->{log_formats} // {}}, %{$v->{log_formats} // {}}};
        resolve_logs($v, $errors);
    }
}

# Applications, directories, files, users and groups that must exist: configtest finds them
# missing too (and warns of Alias targets that are missing)
sub _missing ($config) {
    my @errors;
    my @servers = ($config, map { $_->{values} } @{$config->vhosts});    # The main server, hosts
    for my $sec (
        grep { defined $_->{app_path} && !-f $_->{app_path} }
        map  { @{$_->{sections} // []} } @servers
        )
    {
        push @errors,
            "$sec->{file} line $sec->{line}: PSGIApp '$sec->{app}' not found ($sec->{app_path})";
    }

    # As Apache, an Alias may name what is not there yet (Debian's munin.conf names a directory
    # that munin-cron makes): its URLs are 404 until it is, and the start says so
    for my $alias (
        grep { !$_->{re} && !-d $_->{dir} && !-f _ }
        map  { @{$_->{aliases} // []} } @servers
        )
    {
        push @{$config->{_warnings}}, "$alias->{file} line $alias->{line}: '$alias->{dir}' "
            . "not found: $alias->{url} answers 404 until it is there";
    }
    push @errors, map {"PerlRequire: file '$_' not found"} grep { !-f } @{$config->requires};
    push @errors,
        'RemoteIPHeader needs RemoteIPInternalProxy or RemoteIPTrustedProxy: '
        . 'which clients may say who the client is'
        if defined $config->remoteip_header && !@{$config->remoteip_proxies};
    push @errors, "User $_: no such user on this system"
        for grep { defined && !/\A#\d+\z/ && !defined getpwnam $_ } $config->user;
    push @errors, "Group $_: no such group on this system"
        for grep { defined && !/\A#\d+\z/ && !defined getgrnam $_ } $config->group;
    push @errors, map {"PerlPreloadScripts: directory '$_' not found"}
        grep { !-d } @{$config->preload_scripts};
    return @errors;
}

# The paths of the main server's settings or a virtual host's, from the one ServerRoot
sub _paths ($self, $v) {
    $v->{document_root} = $self->path($v->{document_root}) if defined $v->{document_root};
    $_->{dir}           = $self->path($_->{dir}) for @{$v->{aliases} // []};

    # A log may be a piped command; the error log also syslog (an access log named syslog is a
    # file of that name, as mod_log_config has it)
    $v->{error_log} = $self->path($v->{error_log})
        if defined $v->{error_log} && $v->{error_log} !~ /\A(?:\||syslog(?::\w+)?\z)/;
    $_->{target} = $self->path($_->{target})
        for grep { $_->{target} !~ /\A\|/ } @{$v->{custom_logs} // []};
    for my $sec (@{$v->{sections} // []}) {
        $sec->{$_ eq 'app' ? 'app_path' : $_} = $self->path($sec->{$_})
            for grep { defined $sec->{$_} } qw(app auth_user_file);
    }
}

sub _normalise ($self) {
    my @warnings;
    my $name = $self->{max_clients_directive};
    if ($self->{server_limit} > $MAX_SERVER_LIMIT) {
        push @warnings, "ServerLimit $self->{server_limit} lowered to $MAX_SERVER_LIMIT";
        $self->{server_limit} = $MAX_SERVER_LIMIT;
    }
    if ($self->{max_clients} > $self->{server_limit}) {
        push @warnings,
            "$name $self->{max_clients} exceeds ServerLimit, lowered to $self->{server_limit}";
        $self->{max_clients} = $self->{server_limit};
    }
    if ($self->{start_servers} > $self->{max_clients}) {
        $self->{start_servers} = $self->{max_clients};
    }

    # As Apache: a MaxSpareServers not above MinSpareServers is raised to MinSpareServers + 1
    $self->{max_spare_servers} = $self->{min_spare_servers} + 1
        if $self->{max_spare_servers} <= $self->{min_spare_servers};
    $self->{$_} = $self->path($self->{$_})
        for qw(access_log pid_file scoreboard_file app types_config);
    $self->_paths($_) for $self, map { $_->{values} } @{$self->{vhosts}};
    $self->{requires}        = [map { $self->path($_) } @{$self->{requires}}];
    $self->{preload_scripts} = [map { $self->path($_) =~ s{/+\z}{}r } @{$self->{preload_scripts}}];
    $self->{_warnings}       = [@warnings, @{$self->{notes}}];
}

1;

__END__

=head1 NAME

Perennial::Config - every setting of Perennial, read once and never changed

=head1 SYNOPSIS

    my $config = Perennial::Config->load(file => 'perennial.conf', overrides => {max_clients => 8});
    say $config->max_clients;
    my $one = $config->with(single_process => 1);

=head1 DESCRIPTION

One immutable object holding every setting, built from an httpd.conf-style file
(L<Perennial::Config::Apache>) and command-line overrides. Errors name the file, the line and
the reason, and all of them are reported at once. Accessors have the names of the keys below.

The file is read as Apache reads its own (L<Perennial::Config::Conditional>):
C<< <IfModule> >>, C<< <IfDefine> >> (names from C<-D NAME> or C<Define>), C<< <IfVersion> >>,
C<${NAME}> in arguments, and C<Include>/C<IncludeOptional> of a file, a directory or a
wildcard, relative to C<ServerRoot>, in sorted order, 8 levels deep at most. Directives that
mean nothing to Perennial are accepted and listed once at start
(L<Perennial::Config::Ignored>); sections and per-directory directives are read by
L<Perennial::Config::Sections> and L<Perennial::Config::PerDir>; the table of settings,
their defaults and types, and the reading of a server-level directive's words are
L<Perennial::Config::Settings>. C<load>'s
C<directives> (the command line's C<--set 'DIRECTIVE VALUE'>) are applied after the file's
and checked the same way.

=head1 CONFIGURATION

Each key is listed with its directive, default and unit. Relative paths in a file are taken
from the directory of that file (or from C<ServerRoot>).

=over

=item access_log (C<--access-log FILE>; none)

An access log in the C<perennial> format (Apache's combined followed by the request duration
in microseconds), besides those of the file.

=item custom_logs, log_formats (C<CustomLog TARGET [FORMAT|NICKNAME]>, C<TransferLog TARGET>,
C<LogFormat FORMAT [NICKNAME]>; none)

Access logs, each with its format: see L<Perennial::Config::Logs> and
L<Perennial::Log::Format>. TARGET is a file or C<|command>.

=item document_root (C<DocumentRoot DIR>; none)

Where URLs that no C<Alias> or C<ScriptAlias> covers are looked for. Without it, such URLs
reach only C<< <Location> >> handlers (PSGI applications, status pages).

=item error_log (C<ErrorLog FILE|"|command"|syslog[:facility]>; standard error)

A file, a command that reads the lines on its standard input (started once by the manager),
or syslog (facility C<local7> unless named), as Apache's.

=item graceful_stop_drain (C<GracefulStopDrain>; 0; seconds)

How long C<graceful-stop> keeps serving, with C<SetHandler server-health> answering 503
C<draining>, before it closes the listeners: a load balancer that checks that page stops sending
requests before the instance stops taking them (Perennial::Manual::Deployment).

=item graceful_shutdown_timeout (C<GracefulShutdownTimeout>; 0 = wait forever; seconds)

How long C<graceful-stop> waits for busy workers before it sends them TERM.

=item keep_alive (C<KeepAlive On|Off>; On)

=item keep_alive_timeout (C<KeepAliveTimeout>; 5 seconds, C<ms> suffix allowed)

=item park_keep_alive (C<ParkKeepAlive On|Off>; On)

=item park_keep_alive_after (C<ParkKeepAliveAfter>; 2ms, C<ms> suffix allowed)

=item park_slow_heads (C<ParkSlowHeads On|Off>; On)

=item park_slow_readers (C<ParkSlowReaders On|Off>; On)

=item park_spool_limit (C<ParkSpoolLimit>; 1G: KB, or with a K, M or G suffix)

An idle kept-alive connection does not hold a worker: when its next request has not come
ParkKeepAliveAfter after a response, the worker hands the connection to the parking process
and goes back to its listeners; the parking process holds it for the rest of KeepAliveTimeout
and hands it back to whichever worker is free when the request arrives (L<Perennial::Park>,
L<Perennial::Manual::WorkerLife>). C<ParkKeepAlive Off> keeps Apache prefork's way: the worker
waits the whole KeepAliveTimeout on its connection. The same process also takes a request head
that comes slowly until it is whole (C<ParkSlowHeads>), and the rest of a response that a
client reads slowly, after a second of it (C<ParkSlowReaders>); each can be turned off alone,
and C<ParkKeepAlive Off> turns all three off. What a slow reader has not taken of a response
made in memory waits in a temporary file, at most 64 MB for one response and
C<ParkSpoolLimit> for all of them together; a rest that does not fit is written by its worker.

=item http_protocol_options (C<HttpProtocolOptions>; Strict LenientMethods Require1.0)

How strictly a request head is read, as Apache 2.4's directive, in the main server or a
C<< <VirtualHost> >>. C<Strict>, the default, refuses with 400 what RFC 9112 does not allow: a
method that is not a token, a line ended by a bare LF, a target that is not a path, an
C<http://> URL (whose host then replaces the Host header) or C<*> for OPTIONS, a fragment or a
user name in the target, a Host that is not a name, an IPv4 address or a bracketed IPv6
address (four numbers without leading zeros; a name's last label starting with a letter), and
chunked bodies whose size lines, extensions, line ends or trailer break the grammar.
C<Unsafe> lets through what Apache's C<Unsafe> does: any method of visible characters, bare LF
line ends (in the head and in chunked bodies), a fragment or a user name in the target
(left out of C<PATH_INFO> and the Host; C<REQUEST_URI> keeps the target as sent), and host
names that break the Strict rules (a run of dots, a slash or a port out of
range is still refused). What can make a proxy in front and Perennial read two different
requests is refused in both modes: a space before a header's colon, obsolete line folding
(which Apache's Strict folds into one line), Content-Length with Transfer-Encoding, a list of
Content-Length values; so is what the head parser (L<HTTP::Parser::XS>) itself cannot read,
which Apache's C<Unsafe> lets through: more than one space between the request line's parts, a
blank after the version, a version in lower case.
C<RegisteredMethods> answers a method HTTP and WebDAV do not register with 501;
C<LenientMethods> (the default) lets any token through. C<Allow0.9> is accepted and ignored
with a note: HTTP/0.9 is never served. A C<< <VirtualHost> >>'s value is read, as Apache reads
it, for the connections whose address it is the first host of (before the Host header is
known): on Perennial, the first host whose address matches the C<Listen> address (an exact
IP, then C<*>, then C<_default_>) and port; a name-based host behind it has no say.

=item limit_request_body (C<LimitRequestBody>; 1073741824 bytes; 0 = unlimited)

Larger bodies, chunked ones included, get 413.

=item limit_request_field_size (C<LimitRequestFieldSize>; 8190 bytes)

A longer header line gets 431.

=item limit_request_fields (C<LimitRequestFields>; 100)

More header fields get 431.

=item limit_request_line (C<LimitRequestLine>; 8190 bytes)

A longer request line gets 414.

=item listen (C<Listen ADDR>, repeatable; 127.0.0.1:8529)

C<HOST:PORT>, C<:PORT>, C<[::1]:PORT> or the path of a Unix socket.

=item listen_backlog (C<ListenBacklog>; 511)

=item locations (C<< <Location /path> SetHandler psgi; PSGIApp FILE </Location> >>)

Mounts a PSGI application file at a path; the longest matching path wins.

=item log_level (C<LogLevel debug|info|warn|error>; info)

Apache's default is warn; Perennial logs worker life at info and shows it by default.

=item max_clients (C<MaxClients>, C<MaxRequestWorkers>; 256)

Most workers alive at once; more connections wait in the listen queue.

=item max_keep_alive_requests (C<MaxKeepAliveRequests>; 100; 0 = unlimited)

=item max_requests_jitter (C<MaxRequestsJitter>; 10%)

Each worker's own limit is MaxRequestsPerChild minus a random number between 0 and this
(a count, or a percentage of MaxRequestsPerChild), so workers do not all recycle at once.

=item max_requests_per_child (C<MaxRequestsPerChild>, C<MaxConnectionsPerChild>; 0 = never)

A worker exits after this many requests. Unlike Apache 2.4, every request on a keep-alive
connection counts, so one long connection cannot keep a worker past its limit.

=item max_lifetime (C<MaxLifetime>; 0 = never; seconds)

A worker retires (after its request) once it has lived this long.

=item max_lifetime_jitter (C<MaxLifetimeJitter>; 10%)

Each worker's lifetime is shortened by a random part of this (seconds or a percentage, at most
half), so workers do not retire together.

=item max_process_size, min_shared_size, max_unshared_size (C<MaxProcessSize>,
C<MinSharedSize>, C<MaxUnsharedSize>; 0 = no limit; KB, or with a K, M or G suffix)

Apache2::SizeLimit's limits, measured from smaps: a worker retires after the request that
finds its resident size over the first, its shared memory under the second, or its
unshared memory (private plus swap) over the third. See L<Perennial::SizeLimit>.

=item size_check_interval (C<SizeCheckInterval>; 1; requests)

How often a worker measures itself against those limits.

=item pool_private_limit (C<PoolPrivateLimit>; 0 = none; KB, or with a K, M or G suffix)

A ceiling on the sum of the workers' private memory; past it the largest idle workers are
retired first. See L<Perennial::Prefork::Recycle>.

=item request_read_timeout (C<RequestReadTimeout>; C<header=20-40,MinRate=500 body=20,MinRate=500>)

mod_reqtimeout's limits (L<Perennial::HTTP::ReadTimeout>): a request's head must arrive
within 20 seconds of its first byte being awaited, a second more for each 500 bytes, 40 at
the most, and its body within 20 seconds, a second more for each 500 bytes; past that the
request is answered 408 and logged. C<header=0> or C<body=0> leaves that stage to C<Timeout>
alone. A head that trickles in does not hold a worker while it does: it waits in the parking
process (see L<Perennial::Manual::WorkerLife>), which gives it to a worker once it is whole.
Also in a C<< <VirtualHost> >>, for the listeners of its address.

=item request_deadline (C<RequestDeadline>, server-wide or in a C<< <Location> >>; 0 = none;
seconds)

A request still running after this is cut: its Perl stack goes to the error log, the client
gets 504, the worker is replaced. See L<Perennial::Watchdog>.

=item slow_request_time (C<SlowRequestTime>, server-wide or in a C<< <Location> >>; 0 = none;
seconds)

A request still running after this gets one stack sample in the error log, and goes on.

=item child_init, child_exit (C<PerlChildInitHandler NAME>, C<PerlChildExitHandler NAME>,
repeatable)

Subs run in each worker as it starts and as it ends (C<My::Hooks> means C<My::Hooks::handler>).
See L<Perennial::Preload>.

=item preload_scripts (C<PerlPreloadScripts DIR>, repeatable)

Scripts below DIR are compiled in the manager by each Registry location serving them, as
ModPerl::RegistryLoader does, so workers share them.

=item max_spare_servers (C<MaxSpareServers>; 10)

=item min_spare_servers (C<MinSpareServers>; 5)

=item modules (C<PerlModule Name ...>, C<-M>)

Modules loaded in the manager before workers fork. A graceful restart loads again those whose
file changed, if they are not in perl's own directories.

=item pid_file (C<PidFile>; none)

=item scoreboard_file (C<ScoreBoardFile>; PidFile with C<.scoreboard> appended, else anonymous)

=item server_limit (C<ServerLimit>; 256; at most 20000)

=item start_servers (C<StartServers>; 5)

=item remoteip_header, remoteip_proxies (C<RemoteIPHeader NAME>, C<RemoteIPInternalProxy
ADDR ...>, C<RemoteIPTrustedProxy ADDR ...>; none)

Behind a trusted proxy, the client's address is read from that header (X-Forwarded-For), as
mod_remoteip; see L<Perennial::RemoteIP>.

=item server_admin, server_signature (C<ServerAdmin ADDRESS>, C<ServerSignature
On|Off|EMail>; none, Off)

Perennial's own error pages are Apache's (L<Perennial::ErrorPage>); the 500 page names
ServerAdmin, and ServerSignature On adds the server's name and port at the foot (Apache's
default is On; Perennial's is Off).

=item server_tokens (C<ServerTokens Prod|Major|Minor|Min|OS|Full>; Prod)

What the C<Server> header says: C<Perennial>, C<Perennial/0>, C<Perennial/0.1>,
C<Perennial/0.1.0>, C<Perennial/0.1.0 (Unix)>, C<Perennial/0.1.0 (Unix) Perl/v5.36.0>.
Apache's default is Full; Perennial's is the least, as Debian's security.conf advises. An
application's own C<Server> header replaces it.

=item merge_slashes (C<MergeSlashes On|Off>; On, Off for a PSGI application named on the command line)

=item trace_enable (C<TraceEnable On|Off>; On)

Off answers TRACE with 405 before any handler sees it; On answers it as Apache's core does,
before access rules and any handler: the request's head echoed as C<message/http> (413 for a
TRACE with a body). A PSGI application named on the command line (plackup's way) gets TRACE
itself, as under plackup and Starman.

=item user, group (C<User NAME|#UID>, C<Group NAME|#GID>, C<--user>, C<--group>; as root:
www-data and the user's group)

Who the workers, their scripts and the CGI children run as when the manager is started as
root; the manager keeps root for its sockets, logs, pid file and scoreboard. C<User root>
keeps root for the workers too, with a warning. Ignored when the manager is not root. See
L<Perennial::Privileges>.

=item types_config (C<TypesConfig FILE>; F</etc/mime.types> when it exists)

The table of file extensions and their types for static files, as mod_mime's.

=item timeout (C<Timeout>; 60 seconds)

How long a worker waits for the next bytes of a request (a head that trickles in gets Timeout
in all), or for the client to take a response: the write of up to 64 KiB must be taken within
Timeout in all, and a larger one 64 KiB per Timeout (1 KiB/s at the default), so a reader that
takes a few bytes now and then cannot hold a worker. A response given up on is logged
(C<response cut short, the client did not take the response within Timeout>).

=back

=head1 METHODS

=head2 load

    my $config = Perennial::Config->load(file => $path, overrides => {workers => 4});

Reads the file, applies the overrides and dies with every error found.

=head2 new

    my $config = Perennial::Config->new(listen => ['127.0.0.1:0']);

Builds a config from keys; dies on an unknown key or a bad value.

=head2 level_of

    my $level = Perennial::Config->level_of('notice');    # info

Perennial's log level (error, warn, info, debug) for one of Apache's.

=head2 passed_env

    my %vars = $config->passed_env(qw(TZ LANG));

The named variables of the server's own environment that are set (for PassEnv).

=head2 path

    my $abs = $config->path('logs/error.log');

Resolves a path against the server root.

=head2 kilobytes

    my $kb = Perennial::Config::kilobytes('400M');    # 409600

A size as the size directives take it (KB, or with K, M or G) in KB; anything else comes back
as it was.

=head2 settings

    my $all = $config->settings;    # {max_clients => 8, ...}

Every key with its value.

=head2 warnings

    $log->warn($_) for $config->warnings;

Adjustments made to the values, as Apache makes them.

=head2 with

    my $variant = $config->with(max_clients => 2);

A new config with some keys changed.

=cut
