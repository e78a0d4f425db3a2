package Perennial::Authz;
use v5.36;
use List::Util qw(any);
use Perennial::Access;
use Perennial::Auth::Basic;
use Perennial::Log::Format;
use Perennial::ErrorPage;
use Perennial::ModPerl::Handler ();

# Who may have a request, from the merged settings of its sections: the Require lines (an
# implicit <RequireAny>, with <RequireAll>, <RequireAny> and <RequireNone> inside), the 2.2
# forms Order/Allow/Deny combined with them by Satisfy (mod_access_compat), and Basic
# authentication when a rule needs to know the user. Every refusal is logged with the section
# that made it.

# undef when the request may go on (REMOTE_USER set if a user was needed), else the answer.
# $perl, from the request's mod_perl phases when it has them (Perennial::ModPerl::Phases's
# auth): its PerlAuthenHandler and PerlAuthzHandler; the user a handler before them set (a
# single sign-on header's), whom the Require lines see first, as Apache's access_checker_ex;
# and whether a PerlAccessHandler refused under Satisfy Any, which then counts as a failed
# Order/Allow/Deny does (both are Apache's access_checker).
sub decide ($class, $set, $env, $log, $default = undef, $perl = undef) {
    my $rules  = $default // $set->{require};
    my $compat = $set->{access_compat};
    return unless $rules || $compat;

    my $r    = _asked($env, $perl);
    my $tree = $rules && {any_of => $rules};
    if ($compat) {
        my $refused = $perl && $perl->{access_refused};
        my $said    = _host_rules($compat, $r, $tree, $refused) or return;
        return _refuse($env, $log,
            $refused ? "PerlAccessHandler ($refused)" : "Order/Allow/Deny ($compat->{where})")
            if $said eq 'denied';
    }
    my $status = _status($tree, $r);
    return if $status eq 'granted';    # A user a handler set is in REMOTE_USER already
    return _provider_failed($env, $log) if $status eq 'error';
    my $where = $default ? 'Require local by default' : $set->{where} // 'a section';
    return _refuse($env, $log, "Require ($where)")    # No user would help
        if $status eq 'denied' || $status eq 'neutral';
    return _authenticate($set, $env, $log, {tree => $tree, r => $r, where => $where}, $perl);
}

# What the rules look at: the client's address, the request, the variables SetEnvIf,
# BrowserMatch and handlers set (Perennial::SetEnvIf; not SetEnv's, which Apache's mod_env sets
# after the access checks), the user a handler set, and the request object for a provider
sub _asked ($env, $perl) {
    return {
        addr    => $env->{REMOTE_ADDR},
        env     => $env,
        vars    => $env->{'perennial.setenvif'} // {},
        user    => $perl && $perl->{user},
        request => $perl && $perl->{request}
    };
}

# What Order/Allow/Deny (and a PerlAccessHandler's refusal, $refused) say with Satisfy: 0 when
# they let the request in, 'denied' when they refuse it, 'require' when the Require lines decide
sub _host_rules ($compat, $r, $tree, $refused) {
    my $host_ok = !$refused && _compat($compat, $r);
    my $any     = ($compat->{satisfy} // 'all') eq 'any';
    return 0        if $host_ok  && ($any  || !$tree);
    return 'denied' if !$host_ok && (!$any || !$tree);
    return 'require';
}

# A user is needed: who it is (a PerlAuthenHandler, else Basic credentials checked against
# AuthUserFile), then whether the user may (a PerlAuthzHandler, else the rules again)
sub _authenticate ($set, $env, $log, $need, $perl) {
    my ($user, $type, $answer) = $perl && $perl->{authen} ? $perl->{authen}->() : ();
    return $answer if $answer;
    if (!defined $user) {
        ($user, $answer) = _basic($set, $env, $log, $need->{where});
        return $answer if $answer;
        $type = 'Basic';
    }
    if ($perl && $perl->{authz}) {
        my ($granted, $refusal) = $perl->{authz}->();
        return $refusal                    if $refusal;
        return _let_in($env, $user, $type) if $granted;
    }
    $need->{r}{user} = $user;
    $env->{REMOTE_USER} = $user;    # Checked, as Apache's r->user: a provider's handler asks it
    my $status = _status($need->{tree}, $need->{r});
    return _provider_failed($env, $log) if $status eq 'error';
    return _let_in($env, $user, $type)  if $status eq 'granted';
    return _failed($set, $env, $log,
        "user $user does not meet the Require lines of $need->{where}");
}

# AUTH_TYPE as Apache's r->ap_auth_type: Basic's, or what a PerlAuthenHandler set, if it did
sub _let_in ($env, $user, $type) {
    $env->{REMOTE_USER} = $user;
    $env->{AUTH_TYPE}   = $type if defined $type;
    return;
}

# Basic credentials checked against AuthUserFile: (user) or (undef, the answer). Without
# AuthType Basic nothing checks the user (a 500, as Apache's "couldn't check user"); without
# AuthUserFile, a client with no credentials is still asked for them, as mod_auth_basic asks.
sub _basic ($set, $env, $log, $where) {
    my $what = "$env->{REQUEST_METHOD} $env->{REQUEST_URI}";
    if (lc($set->{auth_type} // '') ne 'basic') {
        $log->error("$where needs a user, but nothing checks one: no AuthType Basic, and no "
                . "PerlAuthenHandler named a user: $what")
            if $log;
        return (undef, Perennial::ErrorPage->response(500, $env));
    }
    my ($user, $failed, $servers_fault)
        = Perennial::Auth::Basic->authenticate($env, $set->{auth_user_file});
    if ($servers_fault) {    # As Apache: a password file it cannot read is the server's error
        $log->error("$failed ($where): $what") if $log;
        return (undef, Perennial::ErrorPage->response(500, $env));
    }
    return ($user) unless $failed;
    return (undef, _failed($set, $env, $log, $failed));
}

# 401, asking for the section's realm again, and why in the log
sub _failed ($set, $env, $log, $why) {
    $log->warn("client "
            . ($env->{REMOTE_ADDR} // 'unknown')
            . ' authentication failed ('
            . Perennial::Log::Format::clean($why)
            . "): $env->{REQUEST_METHOD} $env->{REQUEST_URI}")
        if $log;
    return Perennial::ErrorPage->response(401, $env,
        Perennial::Auth::Basic->challenge($set->{auth_name} // 'Restricted'));
}

# A PerlAddAuthzProvider that failed (its handler logged why): a 500, as Apache's
sub _provider_failed ($env, $log) {
    $log->error("authorization failed in a PerlAddAuthzProvider: $env->{REQUEST_METHOD} "
            . "$env->{REQUEST_URI}")
        if $log;
    return Perennial::ErrorPage->response(500, $env);
}

sub _refuse ($env, $log, $by) {
    $log->warn("client "
            . ($env->{REMOTE_ADDR} // 'unknown')
            . " denied by $by: $env->{REQUEST_METHOD} $env->{REQUEST_URI}")
        if $log;
    return Perennial::ErrorPage->response(403, $env);
}

# What a node says, as mod_authz_core's apply_authz_sections: 'granted', 'denied', 'no_user'
# (denied, but a user could change that: the client is then asked who it is), or 'neutral' (a
# negated rule that did not refuse: it grants nothing, and a <RequireAll> goes by its other
# rules). A node: {any_of|all_of|none_of => [nodes]} or one rule. RequireAll is denied by any
# child denied, RequireAny granted by any child granted; RequireNone is RequireAny turned over,
# as `Require not` turns its rule: granted becomes denied, and anything else neutral.
sub _status ($node, $r) {
    my $list = $node->{all_of} // $node->{any_of} // $node->{none_of};
    my $status
        = !$list          ? _rule_status($node, $r)
        : $node->{all_of} ? _list_status($list, $r, 'denied')
        :                   _list_status($list, $r, 'granted');
    return $status if !$node->{none_of} || $status eq 'error';
    return $status eq 'granted' ? 'denied' : 'neutral';
}

sub _rule_status ($rule, $r) {
    return _provider_status($rule, $r) if $rule->{provider};
    if (my $inner = $rule->{not}) {
        if ($inner->{provider}) {    # Turned over as `not` turns any rule: granted is denied
            my $said = _provider_status($inner, $r);
            return $said eq 'granted' ? 'denied' : $said eq 'error' ? 'error' : 'neutral';
        }
        return 'neutral' if !defined $r->{user} && Perennial::Access->needs_user($inner);
        return Perennial::Access->check($inner, $r) ? 'denied' : 'neutral';
    }
    return 'no_user' if !defined $r->{user} && Perennial::Access->needs_user($rule);
    return Perennial::Access->check($rule, $r) ? 'granted' : 'denied';
}

# What a PerlAddAuthzProvider's handler says, called with the request object and the rest of
# its Require line, as mod_perl calls it: Apache's authz_status (AUTHZ_GRANTED ...) as a node's
# answer, 'error' (a 500) for AUTHZ_GENERAL_ERROR, a handler that dies or one not found
my %AUTHZ = (0 => 'denied', 1 => 'granted', 2 => 'neutral', 4 => 'no_user');

sub _provider_status ($rule, $r) {
    my $req     = $r->{request} or return 'error';
    my $handler = $Perennial::ModPerl::Handler::RESOLVED{$rule->{handler}}    # As resolve keeps it
        // eval { Perennial::ModPerl::Handler->resolve($rule->{handler}) };
    if (!$handler) {
        $req->log_error("PerlAddAuthzProvider $rule->{provider} $rule->{handler}: $@");
        return 'error';
    }
    my @who = defined $handler->{class} ? ($handler->{class}, $req) : ($req);
    my ($rc, $err)
        = Perennial::ModPerl::run_handler('PerlAuthzProvider', $req, $handler->{code},
        @who, $rule->{args});
    if (defined $err) {
        $req->log_error("PerlAddAuthzProvider $rule->{provider} failed: " . ($err =~ s/\s+\z//r));
        return 'error';
    }
    return $AUTHZ{$rc // 0} // 'error';    # Undef is 0, AUTHZ_DENIED, as mod_perl reads it
}

# A <RequireAll> ($decisive 'denied') or <RequireAny> ('granted'): that answer from any child
# is the list's; neutral children count for nothing, and no_user wins over the other answer
sub _list_status ($list, $r, $decisive) {
    my $status = 'neutral';
    for my $child (@$list) {
        my $said = _status($child, $r);
        return $said    if $said eq $decisive || $said eq 'error';
        $status = $said if $said ne 'neutral' && ($status eq 'neutral' || $said eq 'no_user');
    }
    return $status;
}

# mod_access_compat: Deny,Allow (the default) lets in whom Deny does not name or Allow does;
# Allow,Deny and Mutual-failure only whom Allow names and Deny does not
sub _compat ($compat, $r) {
    my $allowed = (any { Perennial::Access->check($_, $r) } @{$compat->{allow} // []}) ? 1 : 0;
    my $denied  = (any { Perennial::Access->check($_, $r) } @{$compat->{deny}  // []}) ? 1 : 0;
    return ($compat->{order} // 'deny,allow') eq 'deny,allow'
        ? (!$denied || $allowed ? 1 : 0)
        : ($allowed && !$denied ? 1 : 0);
}

1;

__END__

=head1 NAME

Perennial::Authz - Require, RequireAll/Any/None, Order/Allow/Deny/Satisfy and Basic auth

=head1 SYNOPSIS

    my $refused = Perennial::Authz->decide($settings, $env, $log);
    return $refused if $refused;

=head1 DESCRIPTION

Decides with the merged settings of a request's sections, as Apache 2.4's mod_authz_core,
mod_access_compat and mod_auth_basic do. A section's C<Require> lines are a
C<< <RequireAny> >>; C<< <RequireAll> >>, C<< <RequireAny> >> and C<< <RequireNone> >> nest
inside (a C<< <RequireNone> >> only in a C<< <RequireAll> >>, as in Apache). C<Order>, C<Allow from> and C<Deny from> (C<all>, addresses, networks, partial
addresses, names by forward-confirmed reverse DNS, C<env=VAR>, C<env=!VAR>) are combined with
the C<Require> lines by C<Satisfy All> (both) or C<Satisfy Any> (either). A rule that needs
the user (C<valid-user>, C<user>) asks for Basic credentials (401 with the section's
C<AuthName> as the realm) checked against C<AuthUserFile>. A refused client gets 403, or 401
when credentials are missing or wrong, and the error log names the client, the section that
refused it and the request; a client let in after authentication has C<REMOTE_USER> and
C<AUTH_TYPE>.

=head1 METHODS

=head2 decide

    my $answer_or_undef = Perennial::Authz->decide($settings, $env, $log, \@default_rules,
        {authen => sub { ... }, authz => sub { ... }});

The last argument, when the request has them, runs its PerlAuthenHandler (which returns the
user and its auth type, or a refusal as the third value, or nothing to let Basic decide) and
PerlAuthzHandler (true to let the user in, or a refusal as the second value, or nothing to
let the Require lines decide).

=cut
