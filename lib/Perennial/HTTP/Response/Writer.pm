package Perennial::HTTP::Response::Writer;
use v5.36;
use Perennial::HTTP::Response qw(send_body);

# The writer a streaming PSGI application gets from its responder

sub new ($class, $c) { bless {c => $c}, $class }

sub close ($self) {
    return if $self->{closed}++;
    send_body($self->{c}, $self->{c}{framing}, '', 1);
}

sub poll_cb ($self, $cb) { $cb->($self) }

sub write ($self, $data) {
    return if $self->{closed} || !length $data;
    send_body($self->{c}, $self->{c}{framing}, $data, 0);
}

1;

__END__

=head1 NAME

Perennial::HTTP::Response::Writer - the writer of a streamed PSGI response

=head1 SYNOPSIS

    my $writer = $respond->([200, ['Content-Type' => 'text/plain']]);
    $writer->write("part\n");
    $writer->close;

=head1 DESCRIPTION

Sends each C<write> at once, chunked for HTTP/1.1 or raw until the connection closes for
HTTP/1.0; C<close> ends the body. The server closes a writer the application forgot.

=head1 METHODS

=head2 close

    $writer->close;

=head2 poll_cb

    $writer->poll_cb(sub ($w) { $w->write('x'); $w->close });

Calls the callback at once: a preforking server is never non-blocking.

=head2 write

    $writer->write($bytes);

=cut
