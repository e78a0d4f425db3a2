package Perennial::VirtualHosts;
use v5.36;
use Socket qw(getnameinfo NI_NUMERICHOST NI_NUMERICSERV);

# Apache's name-based virtual hosts: the <VirtualHost> sections whose addresses match the
# connection's (an exact IP before *, * before _default_), then the one whose ServerName or
# ServerAlias matches the Host header, else the first of them. A connection no virtual host
# covers goes to the main server. Each host's application is its own dispatcher.

my $MAX_KNOWN = 1000;    # Host headers remembered, so a flood of made-up ones cannot grow it

sub new ($class, %args) {
    my @hosts = @{$args{hosts}};
    for my $h (@hosts) {
        $h->{patterns} = [map { _pattern($_) } grep {defined} $h->{name}, @{$h->{aliases} // []}];
    }
    return bless {
        hosts     => \@hosts,
        main      => $args{main},
        main_name => $args{main_name},
        by_ip     => (
            grep {
                grep { $_->[0] ne '*' && $_->[0] ne '_default_' }
                    @{$_->{addrs}}
            } @hosts
        ) ? 1 : 0,
        known => {},
    }, $class;
}

# The application: the request's host chosen (kept by the Host header as sent, with the port and,
# when a host is named by its IP, the address the client connected to), then its application or
# the main server's. (The choice, _host's, written out in the closure itself: a method call for
# it cost a request about 2.5k instructions; the name made plain, lower case and without a
# port, 10k.)
sub to_app ($self) {
    my ($known, $by_ip, $main, $main_name) = @$self{qw(known by_ip main main_name)};
    return sub ($env) {
        my $ip   = $by_ip ? local_ip($env) : '';
        my $port = $env->{SERVER_PORT} // 0;
        my $sent = $env->{HTTP_HOST}   // '';
        my $key  = "$ip $port $sent";
        my $host = exists $known->{$key} ? $known->{$key} : $self->_learn($key, $ip, $port, $sent);

        # The main server's name too: the status pages keep a slot's last host otherwise
        $env->{'perennial.vhost'} = ($host ? $host->{name} : $main_name) // $env->{SERVER_NAME};
        return $main->($env) unless $host;
        $env->{'perennial.log'}   = $host->{log}   if $host->{log};
        $env->{'perennial.admin'} = $host->{admin} if defined $host->{admin};

        # What a script's SERVER_NAME and SERVER_PORT fall back on (ErrorPage::server_of)
        if    (defined $host->{port}) { $env->{'perennial.server_port'} = $host->{port} }
        elsif ($host->{drop_port})    { delete $env->{'perennial.server_port'} }    # The main one's
        $env->{'perennial.server_name'} = $host->{name} if $sent eq '' && defined $host->{name};
        return $host->{app}->($env);
    };
}

# The logs of the virtual host a request came to (undef: the main server's, or a host without
# logs of its own), for a request refused before it reached one: Apache writes such a request
# in that host's logs, the address's first host's when its Host names none
sub log_of ($self, $env) {
    my $host = $self->_host($env);
    return $host ? $host->{log} : undef;
}

# The request's host (undef: the main server's), as to_app's closure chooses it (written out
# there: a method call for it cost a request 2.5k instructions)
sub _host ($self, $env) {
    my $ip   = $self->{by_ip} ? local_ip($env) : '';
    my $port = $env->{SERVER_PORT} // 0;
    my $sent = $env->{HTTP_HOST}   // '';
    my $key  = "$ip $port $sent";
    return
        exists $self->{known}{$key} ? $self->{known}{$key} : $self->_learn($key, $ip, $port, $sent);
}

# The virtual host for a Host header not seen yet (or undef for the main server), kept
sub _learn ($self, $key, $ip, $port, $sent) {
    my $known = $self->{known};
    %$known = () if keys %$known >= $MAX_KNOWN;
    my $name = lc($sent =~ s/:\d+\z//r =~ s/\.\z//r =~ s/\A\[(.*)\]\z/$1/r);
    return $known->{$key} = $self->_choose($ip, $port, $name);
}

sub _choose ($self, $ip, $port, $name) {
    my @candidates = candidates($self->{hosts}, $ip, $port) or return;
    for my $h (@candidates) {
        return $h if grep { $name =~ $_ } @{$h->{patterns}};
    }
    return $candidates[0];
}

# The <VirtualHost>s whose addresses take a connection to $ip:$port, in their order, from the
# first tier that has any: an exact IP, then *, then _default_. The first is the address's
# default server.
sub candidates ($hosts, $ip, $port) {
    for my $tier (qw(ip * _default_)) {
        my @found = grep {
            grep { _address_matches($_, $tier, $ip, $port) }
                @{$_->{addrs}}
        } @$hosts;
        return @found if @found;
    }
    return;
}

sub _address_matches ($addr, $tier, $ip, $port) {
    my ($host, $p) = @$addr;
    return 0 unless $p eq '*' || $p == $port;
    return $host eq '*'         if $tier eq '*';
    return $host eq '_default_' if $tier eq '_default_';
    return $host ne '*' && $host ne '_default_' && $host eq $ip;
}

# ServerName and ServerAlias: * and ? as wildcards, case-insensitive, any port
sub _pattern ($name) {
    $name = lc $name =~ s{\A\w+://}{}r =~ s/:\d+\z//r;
    my $re = join '', map { $_ eq '*' ? '.*' : $_ eq '?' ? '.' : quotemeta } split /([*?])/, $name;
    return qr/\A$re\z/;
}

# The address the client connected to (a wildcard listener serves several), an IPv4 client of a
# dual-stack listener's without ::ffff:
sub local_ip ($env) { (local_end($env))[0] }

# The connection's local address and port (an IPv4 client on a dual listener as IPv4); without
# a socket to ask, SERVER_NAME and SERVER_PORT
sub local_end ($env) {
    my $io = $env->{'psgix.io'};
    my $sa = $io && getsockname($io) or return ($env->{SERVER_NAME} // '', $env->{SERVER_PORT});
    my ($err, $ip, $port) = getnameinfo($sa, NI_NUMERICHOST | NI_NUMERICSERV);
    return $err ? ('', undef) : ($ip =~ s/\A::ffff://r, $port);
}

1;

__END__

=head1 NAME

Perennial::VirtualHosts - Apache's name-based virtual hosts

=head1 SYNOPSIS

    my $app = Perennial::VirtualHosts->new(
        hosts => [{addrs => [['*', 80]], name => 'www.example.org', aliases => ['example.org'],
                   app => $site_app, log => $site_log}],
        main  => $main_app, main_name => 'main.example.org',
    )->to_app;

=head1 DESCRIPTION

Chooses the C<< <VirtualHost> >> of a request as Apache does: among those whose addresses match
the connection (an exact IP first, then C<*>, then C<_default_>; the port must match or be
C<*>), the first whose C<ServerName> or C<ServerAlias> (with C<*> and C<?> wildcards) matches
the C<Host> header, else the first listed for that address. A request no virtual host covers
goes to the main server. The choice is kept per address and host name (a thousand at most).
The request's C<perennial.vhost> names the host (the access log's C<%v>; the main server's
C<ServerName> when no virtual host covers it) and C<perennial.log> its own logs, if it has
any, and C<perennial.admin> its C<ServerAdmin>; C<perennial.server_port> its port as Apache's
server_rec has it (its C<ServerName>'s, none when that names none, else its address's), and
C<perennial.server_name> its C<ServerName> when the request has no C<Host> (a script's C<SERVER_PORT> and C<SERVER_NAME> then, as Apache's).

=head1 METHODS

=head2 new

    my $vhosts = Perennial::VirtualHosts->new(hosts => \@hosts, main => $app, main_name => $name);

=head2 to_app

    my $app = $vhosts->to_app;

=head1 FUNCTIONS

=head2 candidates

    my ($default, @others) = Perennial::VirtualHosts::candidates(\@hosts, '127.0.0.1', 80);

The hosts (each with C<addrs>, as C<< [host, port] >> pairs) whose addresses take a connection
to that address and port, from the first tier that has any (an exact IP, C<*>, C<_default_>),
in their order: the first is the address's default server.

=head2 local_ip

    my $ip = Perennial::VirtualHosts::local_ip($env);

The address the client connected to, from the connection's socket (C<psgix.io>); also what
C<< $r->connection->local_ip >> answers.

=cut
