package Perennial::ModPerl::Access;
use v5.36;
use Perennial::Auth::Basic;
use Perennial::ModPerl::Const;

# Apache2::Access for Perennial's request object: what an authentication or authorization
# handler asks (the section's AuthType, AuthName and Require lines, the Basic credentials) and
# how it asks for credentials again (note_basic_auth_failure), as Apache 2.4's core does.

my ($OK, $DECLINED, $HTTP_UNAUTHORIZED, $SERVER_ERROR) = (
    Apache2::Const::OK(),                Apache2::Const::DECLINED(),
    Apache2::Const::HTTP_UNAUTHORIZED(), Apache2::Const::SERVER_ERROR()
);

sub allow_methods ($self, $reset, @methods) {return}    # Allow: is Perennial's to say

sub auth_name ($self, @new) { $self->_setting(auth_name => @new) }
sub auth_type ($self, @new) { $self->_setting(auth_type => @new) }

# (OK, password) with the user set, as ap_get_basic_auth_pw; DECLINED unless AuthType Basic,
# 401 (and a WWW-Authenticate to come) without Basic credentials
sub get_basic_auth_pw ($self) {
    return ($DECLINED, undef) unless lc($self->auth_type // '') eq 'basic';
    if (!defined $self->auth_name) {
        $self->log_error('need AuthName: ', $self->uri);
        return ($SERVER_ERROR, undef);
    }
    my ($user, $password, $why) = Perennial::Auth::Basic->credentials($self->{env});
    if ($why) {
        $self->log_error(
            ($why eq 'not Basic credentials' ? 'client used wrong authentication scheme' : $why),
            ': ', $self->uri)
            if defined $self->{env}{HTTP_AUTHORIZATION};
        $self->note_basic_auth_failure;
        return ($HTTP_UNAUTHORIZED, undef);
    }
    $self->user($user);
    $self->ap_auth_type('Basic');
    $self->{basic_pw_user} = $user;    # Apache's AP_GET_BASIC_AUTH_PW_NOTE (Phases' before_auth)
    return ($OK, $password);
}

sub note_auth_failure ($self) {
    return $self->note_basic_auth_failure if lc($self->auth_type // '') eq 'basic';
    return;
}

# The client is asked for Basic credentials for the section's realm
sub note_basic_auth_failure ($self) {
    $self->err_headers_out->set(Perennial::Auth::Basic->challenge($self->auth_name));
    return;
}

# The section's Require lines: [{requirement => 'valid-user', method_mask => -1}, ...]
sub requires ($self) {
    my $rules = $self->{set} && $self->{set}{require}
        or return undef;    ## no critic (ProhibitExplicitReturnUndef) as mod_perl
    return [map { {requirement => $_->{text} // '', method_mask => -1} } @$rules];
}

sub satisfies ($self) {
    my $compat = $self->{set} && $self->{set}{access_compat};
    return ($compat && ($compat->{satisfy} // 'all') eq 'any') ? 1 : 0;    # SATISFY_ANY : ALL
}

sub some_auth_required ($self) { $self->{set} && $self->{set}{require} ? 1 : 0 }

# A setting of the request's sections, which the request may change for itself
sub _setting ($self, $key, @new) {
    my $old = exists $self->{$key} ? $self->{$key} : $self->{set} && $self->{set}{$key};
    $self->{$key} = $new[0] if @new;
    return $old;
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Access - Apache2::Access on mod_perl's $r

=head1 SYNOPSIS

    sub handler {    # PerlAuthenHandler My::Auth, with AuthType Basic, AuthName, Require
        my $r = shift;
        my ($rc, $password) = $r->get_basic_auth_pw;
        return $rc if $rc != Apache2::Const::OK;
        return Apache2::Const::OK if check($r->user, $password);
        $r->note_basic_auth_failure;
        return Apache2::Const::HTTP_UNAUTHORIZED;
    }

=head1 DESCRIPTION

C<auth_name>, C<auth_type>, C<get_basic_auth_pw>, C<note_auth_failure>,
C<note_basic_auth_failure>, C<requires>, C<satisfies>, C<some_auth_required> and
C<allow_methods> (which does nothing: Perennial says what is allowed), as Apache 2.4 answers
them from the request's sections.

=cut
