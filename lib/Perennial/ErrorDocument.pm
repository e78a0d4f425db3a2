package Perennial::ErrorDocument;
use v5.36;
use Plack::Util ();
use Perennial::ErrorPage;
use Perennial::HTTP::Response qw(plain_response);
use Perennial::Subrequest;

# Apache's ErrorDocument for an error Perennial answered itself: a text in quotes as the body,
# a full URL as a redirect (302), a local path served in its place (internal redirect, with
# REDIRECT_STATUS, REDIRECT_URL and REDIRECT_QUERY_STRING as mod_cgi gives them) under the
# original status.

# Whether a section has an ErrorDocument for an error of code it ran (a handler's status, a
# script that failed): not for a request that is itself an ErrorDocument's, whose own failure
# gets Apache's page, as Apache's does
sub applies ($class, $env, $set, $status) {
    return
           $set
        && $set->{error_documents}
        && defined $set->{error_documents}{$status}
        && !defined $env->{'perennial.status'} ? 1 : 0;
}

sub apply ($class, $env, $set, $res, $dispatch, @extra) {
    my $status = $res->[0];
    my $action = $set->{error_documents}{$status} // return $res;
    return Perennial::ErrorPage->response(302, $env, Location => $action) if $action =~ m{\A\w+://};

    # The page has the status of the error it stands for, and the headers that go with that
    # status (WWW-Authenticate, so that a browser still asks for a password; Allow)
    my @keep;
    Plack::Util::header_iter(
        $res->[1],
        sub ($name, $value) {
            push @keep, $name, $value if $name =~ /\A(?:WWW-Authenticate|Allow)\z/i;
        }
    );
    my $page = $action =~ m{\A/}
        ? $dispatch->(
        Perennial::Subrequest->env(
            $env, $action,
            REDIRECT_STATUS    => $status,
            'perennial.status' => $status,    # The page's own status to begin with
            Perennial::Subrequest->redirected_from($env),
            @extra
        )
        )
        : plain_response($status, $action, 'Content-Type' => 'text/html; charset=iso-8859-1');
    return Plack::Util::response_cb(
        $page,
        sub ($r) {

            # A page that failed itself (its own error, not the one it stands for): Apache's page
            # for the status instead, as Apache answers when an ErrorDocument fails
            @$r = @{Perennial::ErrorPage->response($status, $env)}
                if $r->[0] >= 400 && $r->[0] != $status && ref $r->[2] eq 'ARRAY';
            $r->[0] = $status;
            push @{$r->[1]}, @keep;
            return;
        }
    );
}

1;

__END__

=head1 NAME

Perennial::ErrorDocument - Apache's ErrorDocument, for the errors Perennial answers itself

=head1 SYNOPSIS

    $res = Perennial::ErrorDocument->apply($env, $settings, $res, sub ($env) { $dispatch->($env) });

=head1 DESCRIPTION

For a 4xx or 5xx that Perennial answered itself (a refusal, a missing file, a script that
could not run or died before its head, a handler module's status, or one that died; not the
status and body a PSGI application or a script chose), the section's
C<ErrorDocument> for that status is used: C<"text"> is sent as the body, C<http://...> is a
302 redirect, and C</local/path> is served in its place, under the original status, with
C<REDIRECT_STATUS>, C<REDIRECT_URL>, C<REDIRECT_QUERY_STRING> and C<REDIRECT_REQUEST_METHOD>
in its environment (a script there sees them, as under mod_cgi).

=head1 METHODS

=head2 applies

    return $page unless Perennial::ErrorDocument->applies($env, $settings, 500);

Whether the section has one for the status, and the request is not an ErrorDocument's own.

=head2 apply

    my $res = Perennial::ErrorDocument->apply($env, $settings, $res, $dispatch);

=cut
