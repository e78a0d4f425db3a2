package Perennial::Subrequest;
use v5.36;
use Perennial::HTTP::Request qw(decoded_path without_dot_segments);
use Perennial::SetEnvIf      ();

# The environment of an internal GET for another URL of the same server (a script's local
# Location redirect, an ErrorDocument page): the request's own, with the new path and query,
# no body, and whatever the caller adds (REDIRECT_STATUS ...)

my $MAX_REDIRECTS = 10;    # In one chain, as Apache's LimitInternalRecursion

# The environment of an internal redirect to $url (a script's local Location, mod_perl's
# internal_redirect): the request URI is the new URL (what the dispatcher and the request
# object read) and the chain is counted; undef once the chain is too long. As Apache's, the
# redirected request has REDIRECT_STATUS (the status so far, 200 unless the caller says), and a
# script's REQUEST_URI stays the client's (perennial.original_uri: Apache's original_uri).
sub redirect ($class, $env, $url, %extra) {
    my $depth = ($env->{'perennial.redirects'} // 0) + 1;
    return undef if $depth > $MAX_REDIRECTS;    ## no critic (ProhibitExplicitReturnUndef) none
    return $class->env(
        $env, $url,
        REQUEST_URI              => $url,
        'perennial.redirects'    => $depth,
        'perennial.original_uri' => $env->{'perennial.original_uri'} // $env->{REQUEST_URI},
        REDIRECT_STATUS          => 200,
        %extra
    );
}

# What Apache's internal redirect keeps of the request before it, as REDIRECT_ variables: its
# path (REDIRECT_URL: decoded and merged, Apache's r->uri, as the request object's uri), query
# and method (its SetEnvIf variables: Subrequest->env)
sub redirected_from ($class, $env) {
    return (
        REDIRECT_URL            => ($env->{SCRIPT_NAME} // '') . ($env->{PATH_INFO} // ''),
        REDIRECT_QUERY_STRING   => $env->{QUERY_STRING} // '',
        REDIRECT_REQUEST_METHOD => $env->{REQUEST_METHOD},
    );
}

# What SetEnvIf, BrowserMatch and handlers' subprocess_env set for the request before, and its
# user and AUTH_TYPE, as REDIRECT_* (Apache renames the request's variables for the one it
# redirects to), under the names a script's environment gives them; the REDIRECT_* the
# redirect sets itself (REDIRECT_STATUS, REDIRECT_URL ...) come after and win, as Apache sets
# them after renaming
sub _renamed ($env) {
    my $vars = $env->{'perennial.setenvif'} // {};
    return (
        (map { ('REDIRECT_' . Perennial::SetEnvIf::env_name($_->[0]) => $_->[1]) } values %$vars),
        (map { defined $env->{$_} ? ("REDIRECT_$_" => $env->{$_}) : () } qw(REMOTE_USER AUTH_TYPE))
    );
}

sub env ($class, $env, $url, %extra) {
    my ($path, $query) = split /\?/, $url, 2;
    $env->{'psgix.cleanup.handlers'} //= [] if $env->{'psgix.cleanup'};    # One list for both
    my %new = (
        %$env,
        _renamed($env),
        REQUEST_METHOD  => 'GET',
        PATH_INFO       => without_dot_segments(decoded_path($path), 1),
        QUERY_STRING    => $query // '',
        SCRIPT_NAME     => '',
        CONTENT_LENGTH  => 0,
        'perennial.url' => $url,

        # The client's request line, which Apache's request keeps over internal redirects
        'perennial.the_request' => $env->{'perennial.the_request'}
            // join(' ', map { $_ // '' } @$env{qw(REQUEST_METHOD REQUEST_URI SERVER_PROTOCOL)}),
        %extra
    );
    delete @new{qw(CONTENT_TYPE HTTP_CONTENT_LENGTH HTTP_CONTENT_TYPE)};

    # The request before's variables and user are its own: the new one has them as REDIRECT_*
    # (above), and its own sections set, check and name them again, as Apache's new request_rec
    delete @new{qw(perennial.setenvif REMOTE_USER AUTH_TYPE)};
    open(my $empty, '<', \'') or die "Can't open an empty body: $!\n";
    $new{'psgi.input'} = $empty;
    return \%new;
}

1;

__END__

=head1 NAME

Perennial::Subrequest - the environment of an internal GET for another URL

=head1 SYNOPSIS

    my $env2 = Perennial::Subrequest->env($env, '/errors/404.html?x=1', REDIRECT_STATUS => 404);
    my $res  = $app->($env2);

=head1 DESCRIPTION

Copies the request's PSGI environment for a GET of another URL of the same server: method,
PATH_INFO (decoded, an encoded NUL kept as C<%00>), QUERY_STRING and SCRIPT_NAME are the new request's, the body is empty, and
the given keys are added. The path is decoded and its dot segments merged, as a client's is
(Perennial::HTTP::Request), a C<..> above C</> stopping there. Used for a script's local
C<Location:> redirect, mod_perl's C<< $r->internal_redirect >> and C<ErrorDocument> pages.

=head1 METHODS

=head2 env

    my $new = Perennial::Subrequest->env($env, $url, %extra);

=head2 redirect

    my $new = Perennial::Subrequest->redirect($env, '/other?x=1', REDIRECT_URL => '/this')
        or die 'too many internal redirects';

As C<env>, with C<REQUEST_URI> the new URL and the redirects of the chain counted: undef after
ten, as Apache's C<LimitInternalRecursion>. C<REDIRECT_STATUS> is 200 unless the caller gives
another, and C<perennial.original_uri> keeps the client's request URI, which a script sees as
its C<REQUEST_URI>, as under Apache.

=head2 redirected_from

    my %vars = Perennial::Subrequest->redirected_from($env);

What Apache's internal redirect keeps of a request as C<REDIRECT_> variables: C<REDIRECT_URL>
(its path, decoded and merged as Apache's C<< r->uri >>), C<REDIRECT_QUERY_STRING> and
C<REDIRECT_REQUEST_METHOD>.

=cut
