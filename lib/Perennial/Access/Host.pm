package Perennial::Access::Host;
use v5.36;
use Socket qw(AF_INET AF_INET6 getaddrinfo getnameinfo inet_pton NI_NAMEREQD NI_NUMERICHOST
    SOCK_STREAM);

# Require host and Allow from NAME: the client's name as forward-confirmed reverse DNS gives
# it (the address's name, whose own addresses include the client's), as Apache's double
# lookup; a name matches a rule that is the name or a domain it ends in. Answers are kept a
# minute per worker (a thousand at most), since each lookup can take as long as DNS does.

my $TTL = 60;
my $MAX = 1000;
my %KNOWN;    # address => [name or '', when]

# As Apache's in_domain: the name itself, or a name that ends in it on a whole label
# (example.org: www.example.org, not nogood-example.org); a rule written with its leading dot
# (.example.org) wants a name below it, never the bare domain
sub matches ($addr, $names) {
    my $name = name_of($addr) // return 0;
    for my $want (@$names) {
        next if length $name < length $want || substr($name, -length $want) ne $want;
        return 1
            if length $name == length $want
            || ord $want == ord '.'
            || substr($name, -length($want) - 1, 1) eq '.';
    }
    return 0;
}

# The confirmed name of an address, or undef
sub name_of ($addr) {
    return unless length($addr // '');
    my $known = $KNOWN{$addr};
    return length $known->[0] ? $known->[0] : undef if $known && time - $known->[1] < $TTL;
    %KNOWN = () if keys %KNOWN >= $MAX;
    my $name = _confirmed($addr);
    $KNOWN{$addr} = [$name // '', time];
    return $name;
}

sub _confirmed ($addr) {
    $addr =~ s/\A::ffff:(\d+\.\d+\.\d+\.\d+)\z/$1/i;    # A dual-stack listener's IPv4 client
    my ($err, @res) = getaddrinfo($addr, undef, {flags => Socket::AI_NUMERICHOST()});
    return if $err || !@res;
    (my $e, my $name) = getnameinfo($res[0]{addr}, NI_NAMEREQD);
    return if $e || !defined $name;
    my ($ferr, @forward) = getaddrinfo($name, undef, {socktype => SOCK_STREAM});
    return if $ferr;
    for my $f (@forward) {
        my ($ne, $ip) = getnameinfo($f->{addr}, NI_NUMERICHOST);
        return lc $name if !$ne && $ip eq $addr;
    }
    return;
}

1;

__END__

=head1 NAME

Perennial::Access::Host - a client's name by forward-confirmed reverse DNS

=head1 SYNOPSIS

    my $ok = Perennial::Access::Host::matches($env->{REMOTE_ADDR}, ['example.org']);

=head1 DESCRIPTION

The double lookup Apache makes for C<Require host> and C<Allow from NAME>: the address's name
(reverse DNS), accepted only if that name's addresses include the client's. A rule matches
the name itself or any name below it (C<example.org> matches C<www.example.org>). Answers
are kept for a minute in each worker.

=head1 FUNCTIONS

=head2 matches

    my $ok = Perennial::Access::Host::matches($addr, \@names_or_domains);

=head2 name_of

    my $name = Perennial::Access::Host::name_of($addr);    # undef: none confirmed

=cut
