package Perennial::Access;
use v5.36;
use Socket                    qw(AF_INET AF_INET6 inet_pton);
use Perennial::HTTP::Response qw(plain_response);

# Apache 2.4's host-based Require: `Require all granted|denied`, `Require local` and
# `Require ip ADDRESS...`, several lines meaning any of them (RequireAny). Rules are parsed at
# start; a request costs a few string compares.

my @LOOPBACK = ('127.0.0.0/8', '::1/128');

# One Require line's words into a rule, or an error message
sub parse ($class, @words) {
    my $kind = lc(shift(@words) // '');
    if ($kind eq 'all') {
        return "Require all takes granted or denied"
            if @words != 1 || $words[0] !~ /\A(?:granted|denied)\z/i;
        return {all => lc $words[0] eq 'granted' ? 1 : 0};
    }
    if ($kind eq 'local') {
        return 'Require local takes no arguments' if @words;
        return {local => 1, nets => [map { _net($_) } @LOOPBACK]};
    }
    if ($kind eq 'ip') {
        return 'Require ip takes one or more addresses or networks' unless @words;
        my @nets;
        for my $word (@words) {
            my $net = _net($word) or return "Require ip: '$word' is not an address or network";
            push @nets, $net;
        }
        return {nets => \@nets, ip => [@words]};
    }
    return "Require host is not supported: Perennial makes no DNS lookups (use Require ip)"
        if $kind eq 'host';
    return "Require $kind is not supported (all granted, all denied, local, ip)";
}

# Whether a client address passes any of the rules; a client on a Unix socket is on this host
sub allows ($class, $rules, $addr) {
    my $bits = length($addr // '') ? _bits($addr) : undef;
    for my $rule (@$rules) {
        return $rule->{all} if exists $rule->{all};
        return 1            if $rule->{local} && !length($addr // '');
        next unless defined $bits;
        for my $net (@{$rule->{nets}}) {
            return 1
                if length $bits == length $net->[0]
                && substr($bits, 0, $net->[1]) eq substr($net->[0], 0, $net->[1]);
        }
    }
    return 0;
}

# Wraps an application: a client the rules refuse gets 403 and a line in the error log
sub wrap ($class, $rules, $app, $log, $where) {
    return sub ($env) { $class->refuse($rules, $env, $log, $where) // $app->($env) };
}

# undef when the rules let the client in; else the 403 response, the refusal logged
sub refuse ($class, $rules, $env, $log, $where) {
    return if $class->allows($rules, $env->{REMOTE_ADDR});
    $log->warn("client "
            . ($env->{REMOTE_ADDR} // 'unknown')
            . " denied by Require ($where): $env->{REQUEST_METHOD} $env->{REQUEST_URI}")
        if $log;
    return plain_response(403);
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

Perennial::Access - Apache 2.4's Require all, Require local and Require ip

=head1 SYNOPSIS

    my $rule = Perennial::Access->parse(ip => '10.0.0.0/8', '192.168.1');
    my $app  = Perennial::Access->wrap([$rule], $app, $log, 'perennial.conf line 12');

=head1 DESCRIPTION

The host-based part of mod_authz_core and mod_authz_host. Several C<Require> lines in one
section mean any of them, as C<< <RequireAny> >>. C<Require local> is the loopback networks
(127.0.0.0/8 and ::1) and clients on a Unix socket. Addresses are written as Apache allows:
a full address, C<ADDRESS/BITS>, C<ADDRESS/NETMASK>, or a partial IPv4 address such as
C<10.1>. C<Require host> is refused: it needs a DNS lookup per request.

=head1 METHODS

=head2 allows

    my $ok = Perennial::Access->allows(\@rules, $env->{REMOTE_ADDR});

=head2 parse

    my $rule_or_error = Perennial::Access->parse(qw(ip 10.1 ::1));

Returns a rule (a hash reference) or an error message (a string).

=head2 refuse

    my $res = Perennial::Access->refuse(\@rules, $env, $log, $where) // $app->($env);

The 403 response for a client the rules refuse (the refusal logged), or undef.

=head2 wrap

    my $app = Perennial::Access->wrap(\@rules, $app, $log, $where);

Answers 403 to clients the rules refuse, and logs each refusal with the client, the section
that refused it and the request.

=cut
