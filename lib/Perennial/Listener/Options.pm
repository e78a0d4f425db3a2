package Perennial::Listener::Options;
use v5.36;
use Exporter                       qw(import);
use Perennial::Config::VirtualHost qw(server_name_parts);
use Perennial::HTTP::ReadTimeout   qw(read_timeouts);
use Perennial::HTTP::Request       qw(judged_hosts);
use Perennial::VirtualHosts        ();

# What a listener's connections are read by, made once in the manager: HttpProtocolOptions and
# RequestReadTimeout, where the first <VirtualHost> of the listener's address has its say over
# the main server's, as the default server of an address has in Apache (the head is read before
# the Host header chooses a host); and the Host values the request judge has judged already.

our @EXPORT_OK = qw(listener_options);

sub listener_options ($config, $listener) {
    my ($ip, $port) = $listener->port ? ($listener->host, $listener->port) : ('', 0);
    my @hosts   = Perennial::VirtualHosts::candidates($config->vhosts, $ip, $port);
    my $own     = $hosts[0] ? $hosts[0]{values} : {};
    my %options = (
        %{$config->http_protocol_options},
        %{$own->{http_protocol_options} // {}},
        read_timeout => read_timeouts($config->request_read_timeout, $own->{request_read_timeout}),

        # MergeSlashes, On as Apache's unless the server's own application is a PSGI one named
        # on the command line (plackup -s Perennial sets it Off), which gets its path as sent,
        # as under plackup (Plack's own conformance suite asks for //foo///bar/baz as it came)
        merge_slashes => $config->merge_slashes // (defined $config->app ? 0 : 1),
    );
    $options{hosts} = judged_hosts($options{unsafe}, _host_names($config, $ip, $port, @hosts))
        if $listener->port;
    return \%options;
}

# The Host values a client of this address is likely to send: the address itself, localhost
# on a loopback or wildcard address, and the names of the main server and of the address's
# virtual hosts (not their wildcards), each alone and with the port. A worker's first request
# with one of them is read by the loop in C at once, instead of by the Perl judge, whose code
# each worker would otherwise run (and copy the pages of) for its first request.
sub _host_names ($config, $ip, $port, @vhosts) {
    my $address = $ip =~ /:/ ? "[$ip]" : $ip;
    my @names   = ($address);
    push @names, 'localhost' if $ip =~ /\A(?:127\.|::1\z|0\.0\.0\.0\z|::\z)/;
    push @names, (server_name_parts($config->server_name))[0] if defined $config->server_name;
    push @names, $_->{name}, @{$_->{aliases}} for @vhosts;
    my %seen;
    return map { ($_, "$_:$port") } grep { defined && length && !/[*?]/ && !$seen{lc $_}++ } @names;
}

1;

__END__

=head1 NAME

Perennial::Listener::Options - what a listener's connections are read by, made in the manager

=head1 SYNOPSIS

    use Perennial::Listener::Options qw(listener_options);
    my $options = listener_options($config, $listener);
    # {unsafe => 0, registered => 0, read_timeout => {...}, hosts => {'127.0.0.1:8529' => 1, ...}}

=head1 DESCRIPTION

=head2 listener_options

The listener's C<HttpProtocolOptions> (the first C<< <VirtualHost> >> of its address over the
main server's), its C<RequestReadTimeout>, and, on a TCP listener, C<hosts>: the Host values a
client of it is likely to send, judged as the request judge judges them
(L<Perennial::HTTP::Request>'s C<judged_hosts>). L<Perennial::Connection> starts each of its
listener's judgements from them (made in the manager and shared by the workers, each of which
adds to its own copy of the pages it writes).

=head1 SEE ALSO

L<Perennial::Server>, L<Perennial::Connection>, L<Perennial::HTTP::Request>.

=cut
