package Perennial::RemoteIP;
use v5.36;
use Perennial::Access;

# mod_remoteip: behind a proxy that is trusted (RemoteIPInternalProxy, RemoteIPTrustedProxy),
# the client is the address the proxy names in RemoteIPHeader (X-Forwarded-For), read from the
# right and past every address that is itself a trusted proxy. REMOTE_ADDR (and so Require ip,
# %a, %h and the scripts' environment) becomes that client; X-Forwarded-Proto: https from a
# trusted proxy makes the request https. A header from anyone else is ignored.

sub new ($class, %args) {
    my @proxies = map { Perennial::Access->parse(ip => $_) } @{$args{proxies}};
    return bless {header => 'HTTP_' . (uc($args{header}) =~ tr/-/_/r), proxies => \@proxies},
        $class;
}

sub wrap ($self, $app) {
    return sub ($env) {
        my $peer = $env->{REMOTE_ADDR};
        return $app->($env) unless defined $peer && $self->_trusted($peer);
        if (defined(my $list = $env->{$self->{header}})) {
            my @hops = grep {length} map {s/\A\s+|\s+\z//gr} split /,/, $list;
            my $client;
            while (@hops) {
                $client = pop @hops;
                last unless $self->_trusted($client);
            }
            if (defined $client && $client =~ /\A[0-9a-fA-F:.]+\z/) {
                $env->{'perennial.peer'} = $peer;
                $env->{REMOTE_ADDR}      = $client;
            }
        }
        if (lc($env->{HTTP_X_FORWARDED_PROTO} // '') eq 'https') {
            $env->{'psgi.url_scheme'} = 'https';
            $env->{HTTPS}             = 'on';
        }
        return $app->($env);
    };
}

sub _trusted ($self, $addr) {
    return Perennial::Access->allows($self->{proxies}, $addr);
}

1;

__END__

=head1 NAME

Perennial::RemoteIP - the client's address behind a trusted proxy, as mod_remoteip

=head1 SYNOPSIS

    my $app = Perennial::RemoteIP->new(header => 'X-Forwarded-For', proxies => ['127.0.0.1'])
        ->wrap($app);

=head1 DESCRIPTION

When the connection comes from a proxy named by C<RemoteIPInternalProxy> or
C<RemoteIPTrustedProxy> (addresses or networks), the address list of C<RemoteIPHeader> is
read from the right, past every address that is itself such a proxy; the first other one is
the client, and becomes C<REMOTE_ADDR> for access rules, logs (C<%a>, C<%h>) and scripts. The
proxy's own address stays in C<perennial.peer>. C<X-Forwarded-Proto: https> from such a proxy
sets C<psgi.url_scheme> to https and C<HTTPS=on>. From any other client the headers are
ignored, so they cannot be forged.

=head1 METHODS

=head2 new

    my $remoteip = Perennial::RemoteIP->new(header => $name, proxies => \@addresses);

=head2 wrap

    my $app = $remoteip->wrap($app);

=cut
