package Perennial::Executor::Environment;
use v5.36;
use Perennial;

# The CGI/1.1 environment of RFC 3875 for one request, built from the PSGI environment

# Request headers that are not exported: Proxy would become HTTP_PROXY (httpoxy), the
# body's length and type have their own variables, and the credentials stay with the server,
# as mod_cgi keeps them unless CGIPassAuth is On
my %SKIP = map { $_ => 1 } qw(HTTP_PROXY HTTP_CONTENT_LENGTH HTTP_CONTENT_TYPE HTTP_AUTHORIZATION);
my %PASS_AUTH = %SKIP;
delete $PASS_AUTH{HTTP_AUTHORIZATION};

my %CGI_SET;           # The CGI variables the last script request of this process put in %ENV
my $CGI_NAMES = '';    # Their names, joined, to see at once that the set is the same

# The CGI variables go into the real environment (XS code and child processes see them), but
# only those that differ from what %ENV holds are set, and those an earlier script request set
# that this one has not are removed: most of them (server, client, script) do not change
# between requests, and a whole group that is already in place is seen with one join. (An
# empty value and a missing variable join alike; each group has a variable that is never
# empty, so a group that was removed is always set again.)
sub apply ($class, $groups) {
    no warnings 'uninitialized';    ## no critic (ProhibitNoWarnings) undef is '' in the joins
    my @names;
    for my $group (@$groups) {
        my ($names, $values, $joined) = @$group;
        push @names, @$names;
        next if join("\0", @ENV{@$names}) eq ($joined // join "\0", @$values);
        for my $i (0 .. $#$names) {
            my $now = $ENV{$names->[$i]};
            next if defined $now && $now eq $values->[$i];
            $ENV{$names->[$i]} = $values->[$i];    ## no critic (RequireLocalizedPunctuationVars)
        }
    }
    my $key = join ' ', @names;
    return if $key eq $CGI_NAMES;
    my %now = map { $_ => 1 } @names;
    delete @ENV{grep { !$now{$_} } keys %CGI_SET};
    %CGI_SET   = %now;
    $CGI_NAMES = $key;
}

# Variables put into %ENV besides the groups (mod_perl's subprocess_env in void context): the
# next apply removes them as it removes what an earlier request set
sub add ($class, $names, $values) {
    @ENV{@$names} = @$values;        ## no critic (RequireLocalizedPunctuationVars)
    $CGI_SET{$_}  = 1 for @$names;
    $CGI_NAMES    = "\0";            # No set of names: the next apply looks at them again
    return;
}

sub new ($class, %args) {
    my $self = bless {
        bare_path_info => $args{bare_path_info},
        setup          => $args{setup_env}     // 1,
        docroot        => $args{document_root} // $args{root} // '',    # None: no DocumentRoot
        skip           => $args{pass_auth} ? \%PASS_AUTH : \%SKIP,
    }, $class;
    my %perl = %{$args{perl_env} // {}};
    $self->{perl_only} = [[sort keys %perl], [@perl{sort keys %perl}]];

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

# The variables in groups that tend to change together: [names, values, joined values] for
# the location and script (the same on every request, so kept with the resolved hit), [names,
# values] for the request line and server, the request headers, and the client's port (new
# with every connection). With PerlSetupEnv Off, only PerlSetEnv's and PerlPassEnv's.
sub groups ($self, $env, $hit) {
    return $self->{setup} ? [$self->_groups($env, $hit)] : [$self->{perl_only}];
}

sub _groups ($self, $env, $hit) {
    my ($host) = ($env->{HTTP_HOST} // $env->{SERVER_NAME} // '') =~ /\A(\[[^\]]*\]|[^:]*)/;
    my @names = qw(SERVER_NAME SERVER_PORT SERVER_PROTOCOL REQUEST_METHOD REQUEST_URI
        QUERY_STRING REMOTE_ADDR);
    my @values = (
        $host,
        @$env{qw(SERVER_PORT SERVER_PROTOCOL REQUEST_METHOD REQUEST_URI)},
        $env->{QUERY_STRING} // '',
        $env->{REMOTE_ADDR}  // ''
    );
    if (($env->{'psgi.url_scheme'} // '') eq 'https') { push @names, 'HTTPS'; push @values, 'on' }
    for my $name (qw(CONTENT_LENGTH CONTENT_TYPE REMOTE_USER AUTH_TYPE)) {
        next unless $name eq 'CONTENT_LENGTH' ? $env->{$name} : defined $env->{$name};
        push @names,  $name;
        push @values, $env->{$name};
    }
    my $skip = $self->{skip};
    my @headers
        = sort grep { (index($_, 'HTTP_') == 0 && !$skip->{$_}) || index($_, 'REDIRECT_') == 0 }
        keys %$env;
    return (
        $hit->{cgi} //= $self->_script_group($hit),
        [\@names,         \@values],
        [\@headers,       [@$env{@headers}]],
        [['REMOTE_PORT'], [$env->{REMOTE_PORT} // '']]
    );
}

# What depends only on the location, the script and the URL that named it
sub _script_group ($self, $hit) {
    my @names  = (@{$self->{names}},  qw(SCRIPT_NAME SCRIPT_FILENAME));
    my @values = (@{$self->{values}}, @$hit{qw(script_name file)});
    if (length $hit->{path_info}) {
        push @names, qw(PATH_INFO PATH_TRANSLATED);
        push @values, $hit->{path_info}, $self->{docroot} . $hit->{path_info};
    }
    elsif (!$self->{bare_path_info}) {    # mod_perl's perl-script sets no empty PATH_INFO
        push @names,  'PATH_INFO';
        push @values, '';
    }
    return [\@names, \@values, join "\0", @values];
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

=head2 apply

    Perennial::Executor::Environment->apply($cgi->groups($env, $hit));

Puts the variables in C<%ENV>: the real environment, so XS code and child processes see them.
Only those that differ from what C<%ENV> holds are set, and those an earlier script request
of this process set that this one has not are removed.

=head2 argv

    local @ARGV = $cgi->argv($env);    # ISINDEX query words

=head2 cgi

    my %vars = $cgi->cgi($env, $hit);

=head2 groups

    for my $group (@{$cgi->groups($env, $hit)}) { my ($names, $values) = @$group; ... }

The same variables in groups that tend to change together, so a caller can see at once that
a whole group is already in place; an empty list when PerlSetupEnv is Off.

=head2 new

    Perennial::Executor::Environment->new(setup_env => 1, set_env => {A => 1, TZ => 'UTC'});

=cut
