package Perennial::ModPerl::Phases::Auth;
use v5.36;
use Perennial::ModPerl::Const;

# The phases around authentication, as methods of Perennial::ModPerl::Phases: those before it
# (post read, header parser, access), what Perennial::Authz asks of the request's handlers
# while it decides (authen, authz, the user a handler set, an access refusal under Satisfy Any),
# and those after it (type, fixup); and what the handlers leave in subprocess_env, kept for the
# rest of the request.

package Perennial::ModPerl::Phases;    ## no critic (ProhibitMultiplePackages)
use v5.36;

my ($OK, $DECLINED) = (Apache2::Const::OK(), Apache2::Const::DECLINED());

# The phases before authentication, or after it: nothing to go on, or the answer and whether
# Perennial made it (ErrorDocument may replace it). A user that a handler before authentication
# names ($r->user from a single sign-on header) is kept for the Require lines (auth).
sub before_auth ($self, $r) {
    my $had = $r->{env}{REMOTE_USER};    # An internal redirect's, which does not count here
    my @got = $self->run_phases($r, qw(perl_post_read perl_header_parser));

    # A user that get_basic_auth_pw named before the access checks is only what the client
    # says, not yet checked: Apache takes it back before them (request.c), so that it does not
    # meet the Require lines
    if (defined $r->{basic_pw_user}) {
        if (defined $had) { $r->{env}{REMOTE_USER} = $had }
        else              { delete $r->{env}{REMOTE_USER} }
    }
    @got = $self->_access($r) unless @got;
    my $user = $r->{env}{REMOTE_USER};
    $r->{user_before_auth} = $user if defined $user && (!defined $had || $user ne $had);
    _keep_env($r) if $r->{subprocess_env};
    return @got;
}

sub after_auth ($self, $r) {
    my @got = $self->run_phases($r, qw(perl_type perl_fixup));
    _keep_env($r) if $r->{subprocess_env};
    return @got;
}

# What the handlers set with subprocess_env before the response (a table made with the
# request's SetEnvIf variables in it: RequestRec's subprocess_env) becomes the request's, as
# Apache's r->subprocess_env: Require env sees it, a script gets it under its CGI variables,
# and an internal redirect as REDIRECT_*. The table goes, so that one asked for later is made
# again with what the response has (a handler module's CGI variables).
sub _keep_env ($r) {
    return if $r->{environment} || $r->{site}{environment};    # The response's own table
    my ($table, %vars) = delete $r->{subprocess_env};
    $table->do(sub ($name, $value) { $vars{lc $name} //= [$name, $value]; 1 });
    if (%vars) { $r->{env}{'perennial.setenvif'} = \%vars }
    else       { delete $r->{env}{'perennial.setenvif'} }
    return;
}

# The access phase. With Satisfy Any, a handler's refusal is not the answer: it fails that way
# in, and the Require lines decide (told by auth), as Apache goes on to access_checker_ex and
# authentication when its access_checker hooks do not all say OK
sub _access ($self, $r) {
    return $self->run_phases($r, 'perl_access') unless $r->{set}{perl_access} && $r->satisfies;
    my $rc = $self->run($r, 'perl_access');
    return (delete $r->{redirected}, 0) if $r->{redirected};    # Its internal_redirect's
    $r->{access_refused} = $rc unless $rc == $OK || $rc == $DECLINED;
    return;
}

# What Perennial::Authz asks of the request's phases: its PerlAuthenHandler and
# PerlAuthzHandler, the user a handler before them set, the access phase's refusal under
# Satisfy Any, and the request object (a PerlAddAuthzProvider's handler is given it)
sub auth ($self, $r) {
    my $set = $r->{set};
    return {
        request        => $r,                       # For a PerlAddAuthzProvider's handler
        user           => $r->{user_before_auth},
        access_refused => $r->{access_refused},
        authen         => $set->{perl_authen} && sub () { $self->_authen($r) },
        authz          => $set->{perl_authz}  && sub () {
            my $rc = $self->run($r, 'perl_authz');
            return (0, delete $r->{redirected}) if $r->{redirected};    # Its internal_redirect's
            return ()                           if $rc == $DECLINED;
            return (1)                          if $rc == $OK;
            return (0, $self->answer($r, perl_authz => $rc));
        },
    };
}

# (user, auth type), or (undef, undef, the answer), or nothing when every handler declined. The
# type is what the handler set with ap_auth_type (get_basic_auth_pw sets Basic), if anything.
sub _authen ($self, $r) {
    my $rc = $self->run($r, 'perl_authen');
    return (undef, undef, delete $r->{redirected}) if $r->{redirected};    # internal_redirect's
    return ()                                      if $rc == $DECLINED;
    return (undef, undef, $self->answer($r, perl_authen => $rc)) if $rc != $OK;
    my $user = $r->user;
    return ($user, $r->ap_auth_type) if defined $user;
    $r->log_error('PerlAuthenHandler returned OK but set no user: ', $r->uri);
    return (undef, undef, $self->answer($r, perl_authen => 500));
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Phases::Auth - the mod_perl phases around authentication

=head1 SYNOPSIS

    my ($answer, $own) = $phases->before_auth($r);
    $answer //= Perennial::Authz->decide($settings, $env, $log, undef, $phases->auth($r));
    ($answer, $own) = $phases->after_auth($r) unless $answer;

=head1 DESCRIPTION

Methods of L<Perennial::ModPerl::Phases>: C<before_auth>, C<auth> and C<after_auth>, as the
synopsis of that module uses them.

=cut
