package Perennial::Executor::Environment;
use v5.36;
use Perennial;
use Perennial::Config     ();
use Perennial::ErrorPage  ();
use Perennial::HTTP::Core ();
use Perennial::SetEnvIf   ();
use Perennial::Twins;

# The CGI/1.1 environment of RFC 3875 for one request, built from the PSGI environment

# Request headers that are not exported: Proxy would become HTTP_PROXY (httpoxy), the
# body's length and type have their own variables, and the credentials stay with the server,
# as mod_cgi keeps them unless CGIPassAuth is On
my %SKIP = map { $_ => 1 } qw(HTTP_PROXY HTTP_CONTENT_LENGTH HTTP_CONTENT_TYPE HTTP_AUTHORIZATION);
my %PASS_AUTH = %SKIP;
delete $PASS_AUTH{HTTP_AUTHORIZATION};

# The names of the CGI variables the last script request of this process put in %ENV, joined
# with NULs (see sync_env). A package variable: Perennial::ModPerl::Phases::open and the
# dispatcher's way to a mounted application look whether it is empty before they call apply or
# forget_script_env (the call and sync_env's, to find nothing to do, cost a handler module's
# request 4.6k instructions); only this module writes it.
our %CGI_SET = (names => '');

# The variables of every request, from its PSGI environment; undefined ones are empty
my @REQUEST = qw(SERVER_NAME SERVER_PORT SERVER_PROTOCOL REQUEST_METHOD REQUEST_URI
    QUERY_STRING REMOTE_ADDR REMOTE_PORT REQUEST_SCHEME);
my @OPTIONAL = qw(CONTENT_LENGTH CONTENT_TYPE REMOTE_USER AUTH_TYPE);

# The C sync_env (xs/Environment.xs), or its Perl twin below
Perennial::Twins::install(__PACKAGE__, qw(sync_env delete_perl_only));

# The CGI variables go into the real environment (XS code and child processes see them), but
# only those that differ from what %ENV holds are set (most of them, server, client and script,
# do not change between requests, and each setenv costs), and those the last call set that
# this one has not are removed. The groups are pairs of arrays (names, values); with $env, the
# request's own variables follow them, then its headers (HTTP_* but those in %$skip) and
# REDIRECT_* variables.
sub pp_sync_env ($state, $env, $skip, @groups) {
    die "sync_env: names without values\n" if @groups % 2;
    push @groups, map {@$_} _request_groups($env, $skip) if ref $env eq 'HASH';
    my (@names, @values);
    while (my ($names, $values) = splice @groups, 0, 2) {
        my @i = grep { defined $names->[$_] } 0 .. $#$names;
        push @names,  @$names[@i];
        push @values, @$values[@i];
    }
    no warnings 'uninitialized';    ## no critic (ProhibitNoWarnings) undef is '' in the joins
    for my $i (join("\0", @ENV{@names}) eq join("\0", @values) ? () : 0 .. $#names) {
        my ($now, $value) = ($ENV{$names[$i]}, $values[$i] // '');
        $ENV{$names[$i]} = $value    ## no critic (RequireLocalizedPunctuationVars)
            unless defined $now && $now eq $value;
    }
    my $joined = join '', map {"$_\0"} @names;
    return if $joined eq ($state->{names} // '');
    my %now  = map { $_ => 1 } @names;
    my $base = $state->{base} // {};
    for my $name (grep { !$now{$_} } split /\0/, $state->{names} // '') {
        ## no critic (RequireLocalizedPunctuationVars) the request's are taken out
        if (exists $base->{$name}) { $ENV{$name} = $base->{$name} }
        else                       { delete $ENV{$name} }
    }
    $state->{names} = $joined;
    return;
}

# Takes a variable out of %ENV that was put there without setenv (Hash::Util's hv_store, as
# MOD_PERL is while a handler runs): the C environment does not hold it, so the C deletes it
# without the unsetenv that %ENV's magic asks for (a scan of the environment, 1.7k
# instructions), unless it is there after all (code set it since). The Perl's delete asks it.
sub pp_delete_perl_only ($name) {
    delete $ENV{$name};
    return;
}

# The environment as start-up left it (Perennial::Preload: the server level's PerlSetEnv and
# PerlPassEnv, and what the start-up code set): what a request's variables leave it, a value
# of the same name that one of them replaced coming back
sub keep_base ($class) {
    $CGI_SET{base} = {%ENV};
    return;
}

# Groups as `groups` returns them into %ENV, as sync_env does (no groups: none of the variables
# an earlier request set stays)
sub apply ($class, $groups) {
    sync_env(\%CGI_SET, undef, undef, map { @$_[0, 1] } @$groups);
    return;
}

# Variables put into %ENV besides the groups (mod_perl's subprocess_env in void context): the
# next request removes them unless it sets them itself
sub add ($class, $names, $values) {
    @ENV{@$names} = @$values;    ## no critic (RequireLocalizedPunctuationVars)
    $CGI_SET{names} .= "$_\0" for @$names;
    return;
}

# The CGI variables a script request before this one put in %ENV (its client's query, cookies,
# address) taken out, the server's own given back: a PSGI application that reads %ENV
# (CGI::Emulate::PSGI adds the request's own to it) must not see another client's, as under
# mod_perl, which takes a request's variables out of %ENV when it ends. Not for a request an
# internal redirect made in a script's request: that client's own.
sub forget_script_env ($class, $env) {
    $class->apply([]) if length $CGI_SET{names} && !$env->{'perennial.prev'};
    return;
}

# A section's PerlSetEnv and PerlPassEnv variables, the server level's merged in: name => value
sub perl_vars ($class, $set) {
    return (%{$set->{perl_env} // {}},
        Perennial::Config->passed_env(@{$set->{perl_pass_env} // []}));
}

# Variables (name => value) as a group that sync_env and apply take: [names, values], the names
# in order; undef for none
sub group ($class, %vars) {
    my @names = sort keys %vars;
    return @names ? [\@names, [@vars{@names}]] : undef;
}

# The variables of a script request, in %ENV (the hot path, in C: see sync_env)
sub put ($self, $env, $hit) {
    return sync_env(\%CGI_SET, undef, undef, @{$self->{perl_only}}) unless $self->{setup};
    return sync_env(
        \%CGI_SET,
        $env,
        $self->{skip},
        ($env->{'perennial.setenvif'} ? _setenvif_group($env) : ()),
        @{$hit->{cgi} //= $self->_script_group($hit, $env)},
        $self->{signed} ? _signature_group($env) : ()
    );
}

sub new ($class, %args) {
    my $self = bless {
        signed  => !Perennial::ErrorPage::signature_off(),       # SERVER_SIGNATURE per request
        setup   => $args{setup_env}     // 1,
        docroot => $args{document_root} // $args{root} // '',    # None: no DocumentRoot
        skip    => $args{pass_auth} ? \%PASS_AUTH : \%SKIP,
    }, $class;
    $self->{perl_only} = $class->group(%{$args{perl_env} // {}}) // [[], []];

    # What is the same for every request of this location, computed once; SetEnv ones first,
    # so that a CGI variable of the same name wins
    my %set = %{$args{set_env} // {}};
    $self->{names}  = [keys %set, qw(GATEWAY_INTERFACE SERVER_SOFTWARE PERENNIAL DOCUMENT_ROOT)];
    $self->{values} = [
        values %set, 'CGI/1.1',
        "Perennial/$Perennial::VERSION",
        "Perennial/$Perennial::VERSION " . ($args{name} // 'Executor'),
        $self->{docroot}
    ];
    return $self;
}

# @ARGV of an ISINDEX query (no '='), as mod_cgi gives it
sub argv ($self, $env) {
    my $query = $env->{QUERY_STRING} // '';
    return () if $query eq '' || index($query, '=') >= 0;
    return map {s/%([0-9A-Fa-f]{2})/chr hex $1/ger} split /\+/, $query;
}

# All the variables as one list of pairs, as a forked script gets them
sub cgi ($self, $env, $hit) {
    return map {
        my ($names, $values) = @$_;
        map { ($names->[$_], $values->[$_]) } 0 .. $#$names
    } $self->_groups($env, $hit);
}

# The variables as groups of [names, values] for `apply` (and for a process that applies them
# itself): the location and script (the same on every request, so kept with the resolved hit),
# the request line, server and client, the body's and the user's, and the request headers.
# With PerlSetupEnv Off, only PerlSetEnv's and PerlPassEnv's.
sub groups ($self, $env, $hit) {
    return $self->{setup} ? [$self->_groups($env, $hit)] : [$self->{perl_only}];
}

sub _groups ($self, $env, $hit) {
    return (
        ($env->{'perennial.setenvif'} ? [_setenvif_group($env)] : ()),
        $hit->{cgi} //= $self->_script_group($hit, $env),
        _request_groups($env, $self->{skip}),
        $self->{signed} ? [_signature_group($env)] : ()
    );
}

# What SetEnvIf and BrowserMatch set for this request (Perennial::SetEnvIf), as the group put
# first: the SetEnv variables after it, and the CGI ones, win over it, as in Apache's order
sub _setenvif_group ($env) {
    my @vars = @{$env->{'perennial.setenvif'}}{sort keys %{$env->{'perennial.setenvif'}}};
    return ([map { Perennial::SetEnvIf::env_name($_->[0]) } @vars], [map { $_->[1] } @vars]);
}

# ServerSignature's line for this request (Apache's SERVER_SIGNATURE), when it is not Off
sub _signature_group ($env) { (['SERVER_SIGNATURE'], [Perennial::ErrorPage::signature($env)]) }

# The request's own variables, then its headers (HTTP_* but those in %$skip, and those whose
# names have a byte other than a letter, a digit or "-", which Apache's http2env does not
# export) and REDIRECT_* variables in the order of their names, as [names, values] groups: what
# sync_env adds from $env (in C as in Perl), and what a process that is given its variables gets
sub _request_groups ($env, $skip) {
    my @headers = sort grep {
               (index($_, 'HTTP_') == 0 && /\AHTTP_[A-Za-z0-9_]+\z/ && !($skip && $skip->{$_}))
            || (index($_, 'REDIRECT_') == 0 && length > 9)
    } keys %$env;
    my ($names, $values) = _optional($env);
    return (
        [\@REQUEST, _request_values($env)],
        ($names ? [$names, $values] : ()),
        [\@headers, [@$env{@headers}]]
    );
}

# The values of @REQUEST: SERVER_NAME and SERVER_PORT the server as the client named it
# (Perennial::ErrorPage::server_of, as Apache's with UseCanonicalName Off: behind a proxy that
# maps ports, the client's port, not the listener's)
sub _request_values ($env) {
    my ($host, $port) = Perennial::ErrorPage::server_of($env);
    return [
        $host, $port,
        @$env{qw(SERVER_PROTOCOL REQUEST_METHOD)},
        $env->{'perennial.original_uri'} // $env->{REQUEST_URI},    # After an internal redirect
        $env->{QUERY_STRING}             // '',
        $env->{REMOTE_ADDR}              // '',
        $env->{REMOTE_PORT}              // '',
        $env->{'psgi.url_scheme'}        // 'http'
    ];
}

# SERVER_ADDR: the listener's address, or the connection's on a listener of every address
# (0.0.0.0, ::), asked once a connection (kept by its descriptor and its peer's address and
# port: the proxy's, under RemoteIP), a v4-mapped one as its IPv4 address (as APR gives it);
# none on a Unix socket (whose listener's name is its path)
my @LAST_LOCAL = ('', '');    # The last connection's (descriptor, peer, port), its address

sub server_address ($env) {
    my $name = $env->{SERVER_NAME} // return;
    return if $name !~ /\A[0-9A-Fa-f:.]+\z/;
    return $name unless $name eq '0.0.0.0' || $name eq '::';
    my $io     = $env->{'psgix.io'};
    my $fd     = eval { fileno $io } // return;
    my $client = join ' ', $fd, $env->{'perennial.peer'} // $env->{REMOTE_ADDR} // '',
        $env->{REMOTE_PORT} // '';
    return $LAST_LOCAL[1] if $LAST_LOCAL[0] eq $client;
    my $local = getsockname($io) // return;
    my ($ip) = Perennial::HTTP::Core::address_of($local) or return;
    $ip =~ s/\A::ffff:(?=\d+\.\d+\.\d+\.\d+\z)//i;
    @LAST_LOCAL = ($client, $ip);
    return $ip;
}

# SERVER_ADDR, HTTPS, and the body's and the user's variables, when the request has them:
# (names, values)
sub _optional ($env) {
    my (@names, @values);
    if (defined(my $addr = server_address($env))) {
        push @names,  'SERVER_ADDR';
        push @values, $addr;
    }
    if (($env->{'psgi.url_scheme'} // '') eq 'https') { push @names, 'HTTPS'; push @values, 'on' }
    for my $name (@OPTIONAL) {
        next unless $name eq 'CONTENT_LENGTH' ? $env->{$name} : defined $env->{$name};
        push @names,  $name;
        push @values, $env->{$name};
    }
    return @names ? (\@names, \@values) : ();
}

# What depends only on the location, the script and the URL that named it (and its virtual
# host, whose plans are its own): as Apache's mod_cgi and mod_perl set them, no PATH_INFO when
# there is none, the Alias that leads to the script as CONTEXT_PREFIX and CONTEXT_DOCUMENT_ROOT
# ('' and the DocumentRoot under it, or for an AliasMatch), and the empty SERVER_SIGNATURE of
# ServerSignature Off
sub _script_group ($self, $hit, $env) {
    my ($prefix, $context) = @{$hit->{context} // ['', $self->{docroot}]};
    my @names = (
        @{$self->{names}}, qw(SCRIPT_NAME SCRIPT_FILENAME SERVER_ADMIN CONTEXT_PREFIX
            CONTEXT_DOCUMENT_ROOT)
    );
    my @values = (
        @{$self->{values}},
        @$hit{qw(script_name file)},
        Perennial::ErrorPage::admin($env),
        $prefix, $context
    );
    if (length $hit->{path_info}) {
        push @names, qw(PATH_INFO PATH_TRANSLATED);
        push @values, $hit->{path_info}, $self->{docroot} . $hit->{path_info};
    }
    if (!$self->{signed}) {
        push @names,  'SERVER_SIGNATURE';
        push @values, '';
    }
    return [\@names, \@values];
}

1;

__END__

=head1 NAME

Perennial::Executor::Environment - the CGI/1.1 variables of a request

=head1 SYNOPSIS

    my $cgi = Perennial::Executor::Environment->new(setup_env => 1, root => '/srv/cgi-bin');
    local %ENV = (%ENV, $cgi->cgi($psgi_env, $hit));

=head1 DESCRIPTION

Builds RFC 3875's variables: GATEWAY_INTERFACE, SERVER_SOFTWARE, SERVER_NAME, SERVER_PORT,
SERVER_PROTOCOL, REQUEST_METHOD, REQUEST_URI, SCRIPT_NAME, SCRIPT_FILENAME, PATH_INFO,
PATH_TRANSLATED, QUERY_STRING, DOCUMENT_ROOT, REMOTE_ADDR, REMOTE_PORT, CONTENT_LENGTH,
CONTENT_TYPE, HTTPS when the scheme is https, and HTTP_* for each request header except
C<Proxy> (httpoxy). C<PERENNIAL> tells a script where it runs (for example
C<Perennial/0.1.0 ModPerl::Registry>); C<MOD_PERL> is deliberately not set, because CGI.pm would
then look for Apache's request object. PerlSetEnv/SetEnv values and PerlPassEnv/PassEnv
variables (resolved by L<Perennial::Config/passed_env>) are added. With PerlSetupEnv Off,
C<groups> returns nothing.

=head1 METHODS

=head2 add

    Perennial::Executor::Environment->add(\@names, \@values);

Puts variables into C<%ENV> beside a request's (mod_perl's C<subprocess_env> in void context);
the next request removes them unless it sets them itself.

=head2 apply

    Perennial::Executor::Environment->apply($cgi->groups($env, $hit));
    Perennial::Executor::Environment->apply([]);    # none of an earlier request's

Puts groups of variables in C<%ENV>, through C<sync_env>.

=head2 argv

    local @ARGV = $cgi->argv($env);    # ISINDEX query words

=head2 cgi

    my %vars = $cgi->cgi($env, $hit);

=head2 groups

    for my $group (@{$cgi->groups($env, $hit)}) { my ($names, $values) = @$group; ... }

The same variables in groups of names and values (the location's and script's, the request's,
the body's and user's when there are any, the headers); only PerlSetEnv's and PerlPassEnv's when
PerlSetupEnv is Off.

=head2 new

    Perennial::Executor::Environment->new(setup_env => 1, set_env => {A => 1, TZ => 'UTC'});

=head2 forget_script_env

    Perennial::Executor::Environment->forget_script_env($psgi_env);

=head2 group

    my $group = Perennial::Executor::Environment->group(NAME => 'value');    # undef for none

=head2 perl_vars

    my %vars = Perennial::Executor::Environment->perl_vars($settings);

A section's PerlSetEnv and PerlPassEnv variables, the server level's merged in.

=head2 put

    $cgi->put($env, $hit);

A script request's variables in C<%ENV>: the real environment, so XS code and child processes
see them. The hot path's way of C<apply>: Perl gathers the few values of the request, and
C<sync_env> adds its headers.

=head1 FUNCTIONS

=head2 server_address

    my $ip = Perennial::Executor::Environment::server_address($env);    # SERVER_ADDR

The address the request came to: the listener's, or on a listener of every address the
connection's own (asked once a connection); undef on a Unix socket.

=head2 sync_env

    Perennial::Executor::Environment::sync_env(\%state, $env, \%skip, \@names, \@values, ...);

Sets each variable of the groups in C<%ENV> unless it holds the same string already (an
undefined value is empty), then, with C<$env>, its request headers (C<HTTP_*> but those in
C<%skip>) and C<REDIRECT_*> variables; then deletes what an earlier call with the same
C<%state> set and this one did not. In C (F<xs/Environment.xs>) unless C<PERENNIAL_PURE_PERL>
is set or it was not built; C<pp_sync_env> is its Perl twin, and the tests run both.

=cut
