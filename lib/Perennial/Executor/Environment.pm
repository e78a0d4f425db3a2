package Perennial::Executor::Environment;
use v5.36;
use Perennial;

# The CGI/1.1 environment of RFC 3875 for one request, built from the PSGI environment

my %SKIP = map { $_ => 1 } qw(HTTP_PROXY HTTP_CONTENT_LENGTH HTTP_CONTENT_TYPE);

sub new ($class, %args) {
    my $self = bless {
        setup   => $args{setup_env}     // 1,
        docroot => $args{document_root} // $args{root},
    }, $class;

    # What is the same for every request of this location, computed once
    $self->{static} = [
        GATEWAY_INTERFACE => 'CGI/1.1',
        SERVER_SOFTWARE   => "Perennial/$Perennial::VERSION",
        PERENNIAL         => "Perennial/$Perennial::VERSION " . ($args{name} // 'Executor'),
        DOCUMENT_ROOT     => $self->{docroot},
    ];
    $self->{set} = [%{$args{set_env} // {}}];
    return $self;
}

# @ARGV of an ISINDEX query (no '='), as mod_cgi gives it
sub argv ($self, $env) {
    my $query = $env->{QUERY_STRING} // '';
    return () if $query eq '' || index($query, '=') >= 0;
    return map {s/%([0-9A-Fa-f]{2})/chr hex $1/ger} split /\+/, $query;
}

# The variables, as a reference to a list of pairs (SetEnv ones first, so the CGI ones win);
# an empty list when PerlSetupEnv is Off
sub variables ($self, $env, $hit) {
    return [] unless $self->{setup};
    my $vars = $self->pairs($env, $hit);
    unshift @$vars, @{$self->{set}} if @{$self->{set}};
    return $vars;
}

sub cgi ($self, $env, $hit) { @{$self->pairs($env, $hit)} }

sub pairs ($self, $env, $hit) {
    my ($host) = ($env->{HTTP_HOST} // $env->{SERVER_NAME} // '') =~ /\A(\[[^\]]*\]|[^:]*)/;
    my @vars = (
        @{$self->{static}},
        @{$hit->{cgi} //= $self->_script_variables($hit)},
        SERVER_NAME     => $host,
        SERVER_PORT     => $env->{SERVER_PORT},
        SERVER_PROTOCOL => $env->{SERVER_PROTOCOL},
        REQUEST_METHOD  => $env->{REQUEST_METHOD},
        REQUEST_URI     => $env->{REQUEST_URI},
        QUERY_STRING    => $env->{QUERY_STRING} // '',
        REMOTE_ADDR     => $env->{REMOTE_ADDR}  // '',
        REMOTE_PORT     => $env->{REMOTE_PORT}  // '',
    );
    push @vars, HTTPS          => 'on' if ($env->{'psgi.url_scheme'} // '') eq 'https';
    push @vars, CONTENT_LENGTH => $env->{CONTENT_LENGTH} if $env->{CONTENT_LENGTH};
    push @vars, CONTENT_TYPE   => $env->{CONTENT_TYPE}   if defined $env->{CONTENT_TYPE};
    push @vars, REMOTE_USER    => $env->{REMOTE_USER}    if defined $env->{REMOTE_USER};

    # Every request header but Proxy (httpoxy: a client must not set a script's HTTP_PROXY)
    for my $name (keys %$env) {
        push @vars, $name, $env->{$name} if index($name, 'HTTP_') == 0 && !$SKIP{$name};
    }
    return \@vars;
}

# What depends only on the script and the URL that named it (kept with the resolved hit)
sub _script_variables ($self, $hit) {
    my @vars = (
        SCRIPT_NAME     => $hit->{script_name},
        SCRIPT_FILENAME => $hit->{file},
        PATH_INFO       => $hit->{path_info},
    );
    push @vars, PATH_TRANSLATED => $self->{docroot} . $hit->{path_info}
        if length $hit->{path_info};
    return \@vars;
}

1;

__END__

=head1 NAME

Perennial::Executor::Environment - the CGI/1.1 variables of a request

=head1 SYNOPSIS

    my $cgi = Perennial::Executor::Environment->new(setup_env => 1, root => '/srv/cgi-bin');
    local %ENV = (%ENV, @{$cgi->variables($psgi_env, $hit)});

=head1 DESCRIPTION

Builds RFC 3875's variables: GATEWAY_INTERFACE, SERVER_SOFTWARE, SERVER_NAME, SERVER_PORT,
SERVER_PROTOCOL, REQUEST_METHOD, REQUEST_URI, SCRIPT_NAME, SCRIPT_FILENAME, PATH_INFO,
PATH_TRANSLATED, QUERY_STRING, DOCUMENT_ROOT, REMOTE_ADDR, REMOTE_PORT, CONTENT_LENGTH,
CONTENT_TYPE, HTTPS when the scheme is https, and HTTP_* for each request header except
C<Proxy> (httpoxy). C<PERENNIAL> tells a script where it runs (for example
C<Perennial/0.01 ModPerl::Registry>); C<MOD_PERL> is deliberately not set, because CGI.pm would
then look for Apache's request object. PerlSetEnv/SetEnv values and PerlPassEnv/PassEnv
variables (resolved by L<Perennial::Config/passed_env>) are added. With PerlSetupEnv Off, C<variables> returns nothing.

=head1 METHODS

=head2 argv

    local @ARGV = $cgi->argv($env);    # ISINDEX query words

=head2 cgi

    my %vars = $cgi->cgi($env, $hit);

=head2 new

    Perennial::Executor::Environment->new(setup_env => 1, set_env => {A => 1, TZ => 'UTC'});

=head2 pairs

    my $pairs = $cgi->pairs($env, $hit);    # as cgi, by reference

=head2 variables

    my $pairs = $cgi->variables($env, $hit);    # [] when PerlSetupEnv is Off

=cut
