package Perennial::Config::Settings;
use v5.36;
use Exporter qw(import);
use Perennial::Access;
use Perennial::HTTP::ReadTimeout qw(parse_read_timeout);

# The table of Perennial's settings (each one's default, type and directive names) and how a
# directive's words become a setting's value, checked: what Perennial::Config reads a file with.

our @EXPORT_OK = qw(apache_level check_setting is_setting kilobytes setting_default
    setting_directive setting_keys setting_level);

# Every setting, its default and its type. Defaults are Apache prefork's where the
# directive is Apache's.
my %SETTINGS = (
    access_log                => [undef,              'path'],
    app                       => [undef,              'path'],
    authz_providers           => [{},                 'hash'],
    daemonize                 => [0,                  'bool'],
    defines                   => [[],                 'list'],
    environment               => ['deployment',       'word'],
    error_log                 => [undef,              'path'],
    graceful_shutdown_timeout => [0,                  'int'],
    graceful_stop_drain       => [0,                  'int'],
    http_protocol_options     => [{},                 'hash'],
    ignored                   => [{},                 'hash'],
    includes                  => [[],                 'list'],
    perl_warnings             => [0,                  'bool'],
    custom_logs               => [[],                 'list'],
    log_formats               => [{},                 'hash'],
    keep_alive                => [1,                  'bool'],
    keep_alive_timeout        => [5,                  'seconds'],
    limit_request_body        => [1_073_741_824,      'int'],
    limit_request_field_size  => [8190,               'int'],
    limit_request_fields      => [100,                'int'],
    limit_request_line        => [8190,               'int'],
    listen                    => [['127.0.0.1:8529'], 'list'],
    listen_backlog            => [511,                'posint'],
    aliases                   => [[],                 'list'],
    document_root             => [undef,              'path'],
    notes                     => [[],                 'list'],
    pass_env                  => [[],                 'list'],
    requires                  => [[],                 'list'],
    sections                  => [[],                 'list'],
    server_dir                => [{},                 'hash'],
    set_env                   => [{},                 'hash'],
    setup_env                 => [1,                  'bool'],
    log_level                 => ['info',             'level'],
    max_clients               => [256,                'posint'],
    park_keep_alive           => [1,                  'bool'],
    park_keep_alive_after     => [0.002,              'seconds'],
    park_slow_heads           => [1,                  'bool'],
    park_slow_readers         => [1,                  'bool'],
    park_spool_limit          => [1_048_576,          'size'],
    max_clients_directive     => ['MaxClients',       'word'],
    max_keep_alive_requests   => [100,                'int'],
    max_requests_jitter       => ['10%',              'jitter'],
    max_requests_per_child    => [0,                  'int'],
    max_lifetime              => [0,                  'seconds'],
    max_lifetime_jitter       => ['10%',              'jitter'],
    max_process_size          => [0,                  'size'],
    max_unshared_size         => [0,                  'size'],
    min_shared_size           => [0,                  'size'],
    pool_private_limit        => [0,                  'size'],
    size_check_interval       => [1,                  'posint'],
    request_deadline          => [0,                  'seconds'],
    request_read_timeout      => [{},                 'hash'],
    slow_request_time         => [0,                  'seconds'],
    child_init                => [[],                 'list'],
    child_exit                => [[],                 'list'],
    preload_scripts           => [[],                 'list'],
    max_spare_servers         => [10,                 'int'],
    min_spare_servers         => [5,                  'int'],
    modules                   => [[],                 'list'],
    pid_file                  => [undef,              'path'],
    scoreboard_file           => [undef,              'path'],
    server_limit              => [256,                'posint'],
    server_root               => [undef,              'path'],
    single_process            => [0,                  'bool'],
    source                    => [undef,              'path'],
    start_servers             => [5,                  'int'],
    timeout                   => [60,                 'seconds'],
    trace_enable              => [1,                  'bool'],
    merge_slashes             => [undef,              'bool'],        # Unset: see listener_options
    types_config              => [undef,              'path'],
    server_name               => [undef,              'word'],
    server_admin              => [undef,              'word'],
    server_signature          => ['Off',              'signature'],
    remoteip_header           => [undef,              'word'],
    remoteip_proxies          => [[],                 'list'],
    vhosts                    => [[],                 'list'],
    server_tokens             => ['Prod',             'tokens'],
    user                      => [undef,              'word'],
    group                     => [undef,              'word'],
);

# Directive name (lower case) => setting key; several Apache names map to one key
my %DIRECTIVES = (
    map({ lc($_) =~ s/_//gr => $_ } keys %SETTINGS),
    errorlog               => 'error_log',
    keepalive              => 'keep_alive',
    maxclients             => 'max_clients',
    maxconnectionsperchild => 'max_requests_per_child',
    maxrequestsperchild    => 'max_requests_per_child',
    maxrequestworkers      => 'max_clients',
    pidfile                => 'pid_file',
    perlmodule             => 'modules',
    perlchildinithandler   => 'child_init',
    perlchildexithandler   => 'child_exit',
    perlpreloadscripts     => 'preload_scripts',
    scoreboardfile         => 'scoreboard_file',
    remoteipinternalproxy  => 'remoteip_proxies',
    remoteiptrustedproxy   => 'remoteip_proxies',
    perladdauthzprovider   => 'authz_providers',
);
my %NOT_DIRECTIVES = map { $_ => 1 }
    qw(aliases app child_exit child_init custom_logs daemonize defines ignored log_formats perl_warnings preload_scripts includes listen max_clients_directive notes pass_env remoteip_proxies requires sections server_dir set_env vhosts
    modules single_process source environment);
my %LIST_DIRECTIVES = map { $_ => 1 }
    qw(listen perlmodule perlchildinithandler perlchildexithandler perlpreloadscripts
    remoteipinternalproxy remoteiptrustedproxy);

my %UNIT_KB = ('' => 1, K => 1, M => 1024, G => 1024 * 1024);

# Sizes are in KB, as Apache2::SizeLimit's; a K, M or G suffix says otherwise. A value that is
# not a size is returned as it is.
sub kilobytes ($value) {
    my ($n, $unit) = $value =~ /\A(\d+(?:\.\d+)?)\s*([KMG]?)B?\z/i or return $value;
    return int($n * $UNIT_KB{uc $unit});
}

# What a value of each type looks like, and how to say it is wrong
my %VALID = (
    posint  => [qr/\A[1-9]\d*\z/,      'a positive integer'],
    int     => [qr/\A\d+\z/,           'a whole number'],
    seconds => [qr/\A\d+(?:\.\d+)?\z/, 'a number of seconds'],
    level   => [
        qr/\A(?:debug|info|warn|error)\z/,
        'one of Apache\'s levels (emerg alert crit error warn notice info debug trace1..8)'
    ],
    tokens => [
        qr/\A(?:prod|productonly|major|minor|min|minimal|os|full)\z/i,
        'Prod, Major, Minor, Min, OS or Full'
    ],
    signature => [qr/\A(?:on|off|email)\z/i, 'On, Off or EMail'],
    jitter    => [qr/\A\d+%?\z/,             'a number or a percentage'],
    size      => [qr/\A\d+\z/,               'a size in KB, or with K, M or G'],
);
my %REF = (list => 'ARRAY', hash => 'HASH');

sub check_setting ($key, $value) {
    my $type = $SETTINGS{$key}[1];
    return                   if !defined $value;
    return "must be a $type" if $REF{$type} && ref $value ne $REF{$type};
    my $valid = $VALID{$type} or return;
    return $value =~ $valid->[0] ? undef : "must be $valid->[1], got '$value'";
}

sub setting_default ($key) {
    my $default = $SETTINGS{$key}[0];
    return [@$default] if ref $default eq 'ARRAY';
    return {%$default} if ref $default eq 'HASH';
    return $default;
}

# TLS is terminated in front of Perennial (docs/design-notes.md, "TLS in front")
my $TLS_FRONT
    = 'Perennial does not terminate TLS: put nginx in front of it (a tested'
    . ' configuration: examples/nginx/perennial-tls.conf, in /usr/share/doc/perennial/ when'
    . ' installed; perennial help deployment)';

# Why TLS settings are refused, for whatever took them (a directive, a plackup option)
sub tls_front () {$TLS_FRONT}

sub setting_directive ($values, $item) {
    my $name = lc $item->{name};
    return "$item->{name}: $TLS_FRONT" if $name =~ /\Assl/;
    my $key = $DIRECTIVES{$name};
    return "unknown directive '$item->{name}'"
        if !$key || ($NOT_DIRECTIVES{$key} && !$LIST_DIRECTIVES{$name});
    return _list_directive($values, $key, $item) if $LIST_DIRECTIVES{$name};
    return _protocol_options($values, $item)     if $key eq 'http_protocol_options';
    return _read_timeout($values, $item)         if $key eq 'request_read_timeout';
    return _authz_provider($values, $item)       if $key eq 'authz_providers';
    my @args = @{$item->{args}};

    if ($key eq 'log_level') {
        @args = _log_level($values, $item);
        return if !@args && @{$item->{args}};    # Only modules' own levels (ssl:warn)
    }
    return "$item->{name} takes one argument" if @args != 1;
    my ($value, $err) = _value($key, $item->{name}, $args[0]);
    return $err if $err;
    $values->{max_clients_directive} = $item->{name} if $key eq 'max_clients';
    $values->{$key} = $value;
    return;
}

# PerlAddAuthzProvider NAME HANDLER: `Require NAME ...` lines after it ask the handler
# (Perennial::Access), as mod_perl registers an authz provider with Apache 2.4
sub _authz_provider ($values, $item) {
    my ($name, $handler, @more) = @{$item->{args}};
    return "$item->{name} takes a provider name and a handler" if !defined $handler || @more;
    $values->{authz_providers}{$name} = $handler;
    Perennial::Access->add_provider($name, $handler);
    return;
}

# Listen, PerlModule, ...: each use adds to the list
sub _list_directive ($values, $key, $item) {
    my @args = @{$item->{args}} or return "$item->{name} takes one or more arguments";
    return _listen($values, $item, @args) if $key eq 'listen';
    for my $addr ($key eq 'remoteip_proxies' ? @args : ()) {
        return "$item->{name}: '$addr' is not an address or network"
            unless ref Perennial::Access->parse(ip => $addr);
    }
    push @{$values->{$key}}, @args;
    return;
}

# Listen [IP:]PORT [PROTOCOL], as Apache's: the protocol is http (https is for a TLS front)
sub _listen ($values, $item, $addr, @protocol) {
    return "$item->{name} takes an address and, after it, a protocol" if @protocol > 1;
    my $protocol = lc($protocol[0] // 'http');
    return "$item->{name} $addr https: $TLS_FRONT"                   if $protocol eq 'https';
    return "$item->{name}: the protocol is http, not '$protocol[0]'" if $protocol ne 'http';
    push @{$values->{listen}}, $addr;
    return;
}

# HttpProtocolOptions: Strict or Unsafe, RegisteredMethods or LenientMethods, and Allow0.9 or
# Require1.0 (HTTP/0.9 is never served: a note says so)
my %PROTOCOL_OPTION = (
    strict            => [unsafe     => 0],
    unsafe            => [unsafe     => 1],
    registeredmethods => [registered => 1],
    lenientmethods    => [registered => 0],
    'require1.0'      => [],
    'allow0.9'        => [],
);

sub _protocol_options ($values, $item) {
    my @args = @{$item->{args}} or return "$item->{name} takes one or more options";
    my (%options, %said);
    for my $word (@args) {
        my $option = $PROTOCOL_OPTION{lc $word}
            or return "$item->{name}: '$word' is not Strict, Unsafe, RegisteredMethods, "
            . 'LenientMethods, Allow0.9 or Require1.0';
        my ($key, $value) = @$option;
        return "$item->{name}: '$said{$key}' and '$word' say opposite things"
            if defined $key && exists $options{$key} && $options{$key} != $value;
        ($options{$key}, $said{$key}) = ($value, $word) if defined $key;
        push @{$values->{notes}},
            "$item->{file} line $item->{line}: $item->{name} Allow0.9 "
            . 'ignored: an HTTP/0.9 request is refused with 400 whatever it says'
            if lc $word eq 'allow0.9';
    }
    $values->{http_protocol_options} = {%{$values->{http_protocol_options} // {}}, %options};
    return;
}

# RequestReadTimeout: the stages it names (Perennial::HTTP::ReadTimeout), over an earlier line's
sub _read_timeout ($values, $item) {
    my @args = @{$item->{args}} or return "$item->{name} takes header=, body= or handshake= limits";
    my ($limits, $why) = parse_read_timeout(\@args, $values->{request_read_timeout});
    return "$item->{name}: $why" unless $limits;
    $values->{request_read_timeout} = $limits;
    return;
}

# Apache's levels onto Perennial's four; a module's own level (ssl:warn) has nothing to set
my %LEVEL = (
    (map { $_ => 'error' } qw(emerg alert crit error)),
    warn => 'warn',
    (map { $_ => 'info' } qw(notice info)),
    (map { $_ => 'debug' } 'debug', map {"trace$_"} 1 .. 8)
);

sub _log_level ($values, $item) {
    my @levels = grep { !/:/ } @{$item->{args}};
    push @{$values->{notes}}, "$item->{file} line $item->{line}: LogLevel for a module ignored: $_"
        for grep {/:/} @{$item->{args}};
    return map { setting_level($_) } @levels;
}

sub setting_level ($word) { $LEVEL{lc $word} // $word }

# Perennial's level for one of Apache's (emerg ... debug, trace1 ... trace8), or undef
sub apache_level ($apache) { $LEVEL{lc $apache} }

# A directive's argument as the setting's value: On/Off, lower-case levels, ms suffixes
sub _value ($key, $name, $value) {
    if ($SETTINGS{$key}[1] eq 'bool') {
        return (undef, "$name must be On or Off, got '$value'") if $value !~ /\A(?:on|off)\z/i;
        return (lc $value eq 'on' ? 1 : 0);
    }
    $value = $value / 1000     if $key =~ /timeout|_after\z/ && $value =~ s/ms\z//;
    $value = kilobytes($value) if $SETTINGS{$key}[1] eq 'size';
    my $err = check_setting($key, $value);
    return $err ? (undef, "$name $err") : ($value);
}

sub setting_keys ()   { keys %SETTINGS }
sub is_setting ($key) { exists $SETTINGS{$key} }

1;

__END__

=head1 NAME

Perennial::Config::Settings - the settings, their defaults and types, and their directives

=head1 SYNOPSIS

    use Perennial::Config::Settings qw(setting_directive check_setting setting_default);
    my $err = setting_directive(\%values, {name => 'KeepAliveTimeout', args => ['300ms'],
        file => $file, line => 3});    # $values{keep_alive_timeout} = 0.3
    my $why = check_setting(max_clients => 0);    # "must be a positive integer, got '0'"

=head1 DESCRIPTION

One table of every setting L<Perennial::Config> has: its default (Apache prefork's where the
directive is Apache's), its type, and the directive names that set it. C<setting_directive>
reads a server-level directive into a hash of values (C<On>/C<Off>, C<ms> suffixes, sizes in KB
or with K, M, G, Apache's log levels, list directives such as C<Listen>, C<HttpProtocolOptions>
and C<RequestReadTimeout>), and returns the error to report with the file and line, or nothing.
C<check_setting> checks a value given any other way (the command line, C<new>);
C<setting_default> gives a fresh copy of a default; C<kilobytes> reads a size;
C<apache_level> maps one of Apache's eight levels onto Perennial's four.

=cut
