package Perennial::HTTP::Response::Writer;
use v5.36;
use Perennial::HTTP::Response qw(send_body);

# The writer a streaming PSGI application gets from its responder

sub new ($class, $c) { bless {c => $c}, $class }

sub close ($self) {
    return if $self->{closed}++;
    send_body($self->{c}, $self->{c}{framing}, '', 1);
}

# The response's bytes are written as they come, head included ($head, in place of the one the
# server made), and the connection closes after them: an nph- script's output, which frames
# itself (and has its body even for HEAD, as mod_cgi sends it)
sub pass_through ($self, $head) {
    my $c = $self->{c};
    @$c{qw(head head_bytes keep_alive framing)} = ($head, length $head, 0, 'close');
    return $self;
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

=head2 pass_through

    $writer->pass_through("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");

The head given replaces the server's, and every C<write> goes to the client unchanged, then the
connection closes: for output that frames itself (an C<nph-> script's, all of which mod_cgi
sends, for HEAD too).

=head2 poll_cb

    $writer->poll_cb(sub ($w) { $w->write('x'); $w->close });

Calls the callback at once: a preforking server is never non-blocking.

=head2 write

    $writer->write($bytes);

=cut
