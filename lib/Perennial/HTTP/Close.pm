package Perennial::HTTP::Close;
use v5.36;
use Exporter              qw(import);
use Socket                qw(MSG_DONTWAIT MSG_PEEK);
use Time::HiRes           ();
use Perennial::HTTP::Core qw(ready);

# How a connection ends. Input no request will read (pipelined requests past the last one
# served, one that came as the connection was given up) would make the kernel reset the
# connection on close, destroying the responses still on their way, and the client could not
# tell whether it was served: so the close lingers, as Apache's does. Half-closed first and
# drained, the connection shows the client the end of the stream, and it sends the request
# again (RFC 9112 9.3.1). The one place that lingers.

our @EXPORT_OK = qw(close_connection pending);

# $unread: bytes read and not served; $served: requests served on it (only one that served more
# than one can have requests unasked, so one closed after each request pays nothing); $linger:
# asked for as the connection was given up
sub close_connection ($sock, $unread, $served, $linger = 0) {
    _linger($sock) if $linger || $unread || ($served > 1 && pending($sock));
    CORE::close($sock);
    return;
}

# Bytes the client sent that are still in the kernel, looked at without waiting
sub pending ($sock) {
    my $peek = '';
    return defined recv($sock, $peek, 1, MSG_PEEK | MSG_DONTWAIT) && length $peek;
}

# Half-closed, then drained for up to 2 s
sub _linger ($sock) {
    shutdown($sock, 1) or return;
    my $until = Time::HiRes::time() + 2;
    my $junk;
    while (ready($sock, $until)) {
        last unless sysread($sock, $junk, 65_536);
    }
}

1;

__END__

=head1 NAME

Perennial::HTTP::Close - end a connection without destroying what is on its way

=head1 SYNOPSIS

    use Perennial::HTTP::Close qw(close_connection);
    close_connection($sock, length $unread_buffer, $requests_served, $given_up);

=head1 DESCRIPTION

Closes a client's connection, lingering (half-close, then read and drop what still comes, for
up to two seconds) when requests may be on their way that no response will answer, so that the
client sees the end of the stream instead of a reset and sends them again.

=head1 FUNCTIONS

=head2 close_connection

    close_connection($sock, $unread_bytes, $served, $linger);

=cut
