package Perennial::ModPerl::URI;
use v5.36;

# Apache2::URI on mod_perl's $r (construct_url, construct_server, parsed_uri) and APR::URI, the
# parsed URL that parsed_uri gives and that code makes with APR::URI->parse: its parts, and
# unparse by APR's rules (the password left out unless asked for, the port only where it is not
# the scheme's own).

# APR's table of schemes and their ports (apr_uri_port_of_scheme)
my %DEFAULT_PORT = (
    http      => 80,
    ftp       => 21,
    https     => 443,
    gopher    => 70,
    ldap      => 389,
    nntp      => 119,
    snews     => 563,
    imap      => 143,
    pop       => 110,
    sip       => 5060,
    rtsp      => 554,
    wais      => 210,
    'z39.50r' => 210,
    'z39.50s' => 210,
    prospero  => 191,
    nfs       => 2049,
    tip       => 3372,
    acap      => 674,
    telnet    => 23,
    ssh       => 22,
);

# unparse's flags (APR::Const's URI_UNP_*)
my ($OMIT_SITE, $OMIT_USER, $OMIT_PASSWORD, $REVEAL_PASSWORD, $OMIT_PATH, $OMIT_QUERY)
    = (1, 2, 4, 8, 16, 32);

package Apache2::RequestRec;    ## no critic (ProhibitMultiplePackages)
use v5.36;

# The URL of a path on this server, as the client reached it
sub construct_url ($self, $path = $self->uri, $pool = undef) {
    my $env = $self->{env};
    return ($env->{'psgi.url_scheme'} // 'http') . '://' . $self->construct_server . $path;
}

# The server's name as the client reached it, with the port unless it is the scheme's own
sub construct_server ($self, $hostname = undef, $port = undef, $pool = undef) {
    $hostname //= $self->get_server_name;
    $port     //= $self->get_server_port;
    my $scheme = $self->{env}{'psgi.url_scheme'} // 'http';
    return $port == ($scheme eq 'https' ? 443 : 80) ? $hostname : "$hostname:$port";
}

# The request's URL as parsed from its request line (its path and query; the whole URL when the
# client sent one), with the request's path_info for rpath
sub parsed_uri ($self) {
    my $uri = APR::URI->parse(undef, $self->unparsed_uri);
    $uri->{path_info} = $self->path_info;
    return $uri;
}

package APR::URI;    ## no critic (ProhibitMultiplePackages)
use v5.36;

# APR::URI->parse($pool, $url), by RFC 3986's pattern, as apr_uri_parse splits it
sub parse ($class, $pool, $url) {
    my %part;
    @part{qw(scheme authority path query fragment)}
        = $url =~ m{\A(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\z}s;
    $part{path} = undef unless length $part{path};    # APR leaves an empty path unset
    if (defined(my $authority = delete $part{authority})) {
        $part{hostinfo} = $authority;
        if ($authority =~ s/\A(.*)\@//s) {
            @part{qw(user password)} = split /:/, $1, 2;
        }
        if ($authority =~ /\A\[([^\]]*)\](?::(\d*))?\z/ || $authority =~ /\A([^\[:]*)(?::(\d*))?\z/)
        {
            @part{qw(hostname port)} = ($1, $2);    # "host:" has an empty port, as APR's
        }
        else {    # A bad host (an IPv6 literal not closed): APR stops there
            delete @part{qw(path query fragment user password)};
        }
    }
    return bless \%part, $class;
}

# The URL again: $flags as APR::Const's URI_UNP_*, the password left out by default
sub unparse ($self, $flags = $OMIT_PASSWORD) {
    my $text = $flags & $OMIT_SITE ? '' : $self->_site($flags);
    return $text if $flags & $OMIT_PATH;
    $text .= $self->{path} // '';
    return $text if $flags & $OMIT_QUERY;
    $text .= "?$self->{query}"    if defined $self->{query};
    $text .= "#$self->{fragment}" if defined $self->{fragment};
    return $text;
}

# scheme://user:password@host:port, as unparse's flags leave them
sub _site ($self, $flags) {
    my $text     = '';
    my $user     = $flags & $OMIT_USER     ? undef : $self->{user};
    my $password = $flags & $OMIT_PASSWORD ? undef : $self->{password};
    if (defined $self->{user} || defined $self->{password}) {
        $text
            = ($user // '')
            . (defined $password ? ':' . ($flags & $REVEAL_PASSWORD ? $password : 'XXXXXXXX') : '')
            . (defined $user || defined $password ? '@'                                       : '');
    }
    if (defined(my $host = $self->{hostname})) {
        $host = "[$host]" if index($host, ':') >= 0;
        my $port = $self->{port};
        my $own  = !$port || $port == ($DEFAULT_PORT{lc($self->{scheme} // '')} // 0);
        $text = "//$text$host" . ($own ? '' : ":$port");
    }
    return defined $self->{scheme} ? "$self->{scheme}:$text" : $text;
}

sub fragment ($self, @new) { $self->_part(fragment => @new) }
sub hostinfo ($self, @new) { $self->_part(hostinfo => @new) }
sub hostname ($self, @new) { $self->_part(hostname => @new) }
sub password ($self, @new) { $self->_part(password => @new) }
sub path     ($self, @new) { $self->_part(path     => @new) }
sub port     ($self, @new) { $self->_part(port     => @new) }
sub query    ($self, @new) { $self->_part(query    => @new) }
sub scheme   ($self, @new) { $self->_part(scheme   => @new) }
sub user     ($self, @new) { $self->_part(user     => @new) }

# The path without the request's path_info (parsed_uri's)
sub rpath ($self) {
    my ($path, $info) = ($self->{path}, $self->{path_info});
    return $path
        if !defined $path || !length($info // '') || substr($path, -length $info) ne $info;
    return substr $path, 0, length($path) - length $info;
}

sub _part ($self, $key, @new) {
    my $old = $self->{$key};
    $self->{$key} = $new[0] if @new;
    return $old;
}

# APR::URI::port_of_scheme($scheme)
sub port_of_scheme ($scheme) { $DEFAULT_PORT{lc $scheme} // 0 }

1;

__END__

=head1 NAME

Perennial::ModPerl::URI - Apache2::URI and APR::URI for mod_perl code in Perennial

=head1 SYNOPSIS

    my $url    = $r->construct_url('/login');            # http://www.example.com:8080/login
    my $server = $r->construct_server;                  # www.example.com:8080
    my $uri    = $r->parsed_uri;                        # APR::URI
    print $uri->path, '?', $uri->query, ' ', $uri->rpath;
    my $other  = APR::URI->parse($r->pool, 'http://user:pw@host:81/p?q#f');
    print $other->unparse;                              # http://user@host:81/p?q#f

=head1 DESCRIPTION

C<parse>, C<unparse> (with APR::Const's C<URI_UNP_*> flags; by default the password is left
out), C<scheme>, C<user>, C<password>, C<hostinfo>, C<hostname>, C<port>, C<path>, C<query>,
C<fragment>, C<rpath> and C<port_of_scheme>, as mod_perl 2's APR::URI answers them; and the
request's C<construct_url>, C<construct_server> and C<parsed_uri>.

=cut
