package Perennial::Access;
use v5.36;
use List::Util qw(any);
use Socket     qw(AF_INET AF_INET6 inet_pton);
use Perennial::Access::Host;

# Apache 2.4's Require rules, one line each: `all granted|denied`, `local`, `ip ADDRESS...`,
# `host NAME...` (the client's name by forward-confirmed reverse DNS), `env VAR...`, `method
# M...`, `valid-user`, `user NAME...`, each may be negated with `not` inside <RequireAll>.
# Rules are parsed at start; the host-based ones cost a few string compares.

my @LOOPBACK = ('127.0.0.0/8', '::1/128');

# One Require line's words into a rule, or an error message
sub parse ($class, @words) {
    my $not  = @words && lc $words[0] eq 'not' ? shift @words : undef;
    my $rule = $class->_rule(@words);
    return $rule unless ref $rule;
    $rule->{text} = join ' ', @words;    # As written, for mod_perl's $r->requires
    return $rule unless $not;
    return "Require not $words[0]: use Require all denied or granted instead"
        if exists $rule->{all};
    return {not => $rule, text => "not $rule->{text}"};
}

my %RULE = (
    all => sub (@w) {
        return "Require all takes granted or denied"
            if @w != 1 || $w[0] !~ /\A(?:granted|denied)\z/i;
        return {all => lc $w[0] eq 'granted' ? 1 : 0};
    },
    local => sub (@w) {
        return 'Require local takes no arguments' if @w;
        return {local => 1, nets => [map { _net($_) } @LOOPBACK]};
    },
    ip => sub (@w) {
        return 'Require ip takes one or more addresses or networks' unless @w;
        my @nets;
        for my $word (@w) {
            my $net = _net($word) or return "Require ip: '$word' is not an address or network";
            push @nets, $net;
        }
        return {nets => \@nets, ip => [@w]};
    },
    host => sub (@w) {
        return 'Require host takes one or more names or domains' unless @w;
        return {host => [map {lc} @w]};
    },
    env    => sub (@w) { @w ? {env => [@w]} : 'Require env takes one or more variable names' },
    method => sub (@w) {
        return 'Require method takes one or more methods' unless @w;
        my %method = map { uc($_) => 1 } @w;
        $method{HEAD} = 1 if $method{GET};    # As Apache's: HEAD is a GET (M_GET)
        return {method => \%method};
    },
    user => sub (@w) {
        @w ? {user => {map { $_ => 1 } @w}} : 'Require user takes one or more names';
    },
    'valid-user' => sub (@w) { @w ? 'Require valid-user takes no arguments' : {valid_user => 1} },
);

# PerlAddAuthzProvider's: a Require line of the provider's name asks its handler, which may
# also take the place of a rule of Perennial's own (AuthCookie's `user`), as in Apache, where
# a provider registered again under a name replaces the one before
my %PROVIDERS;
sub add_provider ($class, $name, $handler) { $PROVIDERS{$name} = $handler; return }
sub forget_providers ($class) { %PROVIDERS = (); return }

# Whether Require rules (a list, or nested sections) ask a PerlAddAuthzProvider
sub asks_provider ($class, $rules) {
    for my $rule (@{$rules // []}) {
        my $inner = $rule->{all_of} // $rule->{any_of} // $rule->{none_of};
        return 1
            if $rule->{provider}
            || $inner && $class->asks_provider($inner)
            || $rule->{not} && $class->asks_provider([$rule->{not}]);
    }
    return 0;
}

sub _rule ($class, @words) {
    my $word = shift(@words) // '';
    my $kind = lc $word;
    return {provider => $word, handler => $PROVIDERS{$word}, args => join(' ', @words)}
        if $PROVIDERS{$word};    # As written: Apache's provider names are case-sensitive
    my $make = $RULE{$kind}
        or return "Require $kind is not supported (all, local, ip, host, env, method, user, "
        . 'valid-user, or a PerlAddAuthzProvider\'s name given before it)';
    return $make->(@words);
}

# How each kind of rule is decided: 1 granted, 0 denied. $r: {addr, env, user, vars}
my @CHECK = (
    [not  => sub ($rule, $r) { __PACKAGE__->check($rule->{not}, $r) ? 0 : 1 }],
    [all  => sub ($rule, $r) { $rule->{all} }],
    [nets => sub ($rule, $r) { _in_nets($rule, $r->{addr}) }],
    [host => sub ($rule, $r) { Perennial::Access::Host::matches($r->{addr}, $rule->{host}) }],

    # Only what SetEnvIf or BrowserMatch set ($r->{vars}): a request header is no variable of
    # the server's, and SetEnv's are set after the access checks, as Apache's mod_env sets them;
    # the names' case does not count, as in Apache's table of them
    [   env => sub ($rule, $r) {
            (any { defined $r->{vars}{lc $_} } @{$rule->{env}}) ? 1 : 0;
        }
    ],
    [method     => sub ($rule, $r) { $rule->{method}{$r->{env}{REQUEST_METHOD}}      ? 1 : 0 }],
    [valid_user => sub ($rule, $r) { defined $r->{user}                              ? 1 : 0 }],
    [user       => sub ($rule, $r) { defined $r->{user} && $rule->{user}{$r->{user}} ? 1 : 0 }],
);

sub check ($class, $rule, $r) {
    for my $kind (@CHECK) {
        return $kind->[1]->($rule, $r) if exists $rule->{$kind->[0]};
    }
    return 0;
}

# Whether a rule can only be decided once the client says who it is
sub needs_user ($class, $rule) {
    return $class->needs_user($rule->{not}) if $rule->{not};
    return $rule->{user} || $rule->{valid_user} ? 1 : 0;
}

# Whether a client address passes any of the rules (the status pages' default)
sub allows ($class, $rules, $addr) {
    return (any { $class->check($_, {addr => $addr, env => {}}) } @$rules) ? 1 : 0;
}

# A client on a Unix socket is on this host
sub _in_nets ($rule, $addr) {
    return $rule->{local} ? 1 : 0 unless length($addr // '');
    my $bits = _bits($addr) // return 0;
    for my $net (@{$rule->{nets}}) {
        return 1
            if length $bits == length $net->[0]
            && substr($bits, 0, $net->[1]) eq substr($net->[0], 0, $net->[1]);
    }
    return 0;
}

# An address as a bit string; IPv4-mapped IPv6 addresses as IPv4
sub _bits ($addr) {
    $addr =~ s/\A::ffff:(\d+\.\d+\.\d+\.\d+)\z/$1/i;
    $addr =~ s/%.*\z//;
    my $packed = inet_pton($addr =~ /:/ ? AF_INET6 : AF_INET, $addr) // return;
    return unpack 'B*', $packed;
}

# ADDRESS, ADDRESS/BITS, ADDRESS/NETMASK, or a partial IPv4 address ("10.1", as Apache)
sub _net ($word) {
    my ($addr, $mask) = split m{/}, $word, 2;
    if ($addr =~ /\A\d+(?:\.\d+){0,2}\.?\z/ && !defined $mask) {
        my @parts = grep {length} split /\./, $addr;
        return if grep { $_ > 255 } @parts;
        return [_bits(join '.', @parts, (0) x (4 - @parts)), 8 * @parts];
    }
    my $bits = _bits($addr) // return;
    return [$bits, length $bits] unless defined $mask;
    if ($mask =~ /\A\d+\z/) {
        return if $mask > length $bits;
        return [$bits, $mask];
    }
    my $mbits = _bits($mask) // return;
    return if length $mbits != length $bits || $mbits !~ /\A(1*)0*\z/;
    return [$bits, length $1];
}

1;

__END__

=head1 NAME

Perennial::Access - Apache 2.4's Require rules

=head1 SYNOPSIS

    my $rule = Perennial::Access->parse(ip => '10.0.0.0/8', '192.168.1');
    my $ok   = Perennial::Access->check($rule, {addr => $env->{REMOTE_ADDR}, env => $env});

=head1 DESCRIPTION

One C<Require> line: C<all granted|denied>, C<local> (127.0.0.0/8, ::1 and clients on a Unix
socket), C<ip> (a full address, C<ADDRESS/BITS>, C<ADDRESS/NETMASK>, or a partial IPv4
address such as C<10.1>; IPv4-mapped IPv6 addresses count as IPv4), C<host> (the client's name
by forward-confirmed reverse DNS, L<Perennial::Access::Host>), C<env VAR> (set by C<SetEnvIf> or
C<BrowserMatch>, L<Perennial::SetEnvIf>; as in Apache, C<SetEnv> comes after the access checks
and does not count, and a request header never does), C<method>, C<valid-user> and C<user NAME> (after Basic
authentication, L<Perennial::Auth::Basic>), each negated with C<not> inside
C<< <RequireAll> >>. L<Perennial::Authz> combines them.

=head1 METHODS

=head2 parse

    my $rule_or_error = Perennial::Access->parse(qw(ip 10.1 ::1));

=head2 check

    my $granted = Perennial::Access->check($rule, {addr => $ip, env => $env, user => $user, vars => \%setenvif_vars});

=head2 needs_user

    my $yes = Perennial::Access->needs_user($rule);

=head2 allows

    my $ok = Perennial::Access->allows(\@rules, $env->{REMOTE_ADDR});

=cut
