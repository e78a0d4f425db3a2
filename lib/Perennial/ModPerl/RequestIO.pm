package Perennial::ModPerl::RequestIO;
use v5.36;
use Perennial::Twins;

# Apache2::RequestIO for Perennial's request object: the body goes out through the same output
# as the script's STDOUT (so printing to either, in any order, keeps the order), the request
# body comes from the same input as STDIN. Text with wide characters is sent as its UTF-8
# bytes, as mod_perl sends a Perl string's buffer.

sub discard_request_body ($self) {
    my $input = $self->{env}{'psgi.input'} or return 0;
    my $chunk;
    1 while $input->read($chunk, 65_536);
    return 0;    # Apache2::Const::OK
}

# print in C (xs/Output.xs, loaded with Perennial::Executor::Output) or its Perl twin
Perennial::Twins::install_from('Perennial::Executor::Output', __PACKAGE__, 'print');

sub pp_print ($self, @list) { $self->_send(join '', @list) }

sub printf ($self, $format, @list) { $self->_send(sprintf $format, @list) }

sub puts ($self, @list) { $self->_send(join '', @list) }

# No signature: the buffer is the caller's variable, reached through @_
sub read {    ## no critic (RequireArgUnpacking)
    my ($self, undef, $length, $offset) = @_;
    my $input = $self->{env}{'psgi.input'} or return 0;
    $_[1] //= '';
    return $input->read($_[1], $length, $offset // 0) // 0;
}

sub rflush ($self) {
    $self->{out} or return;
    $self->{out}->set_head($self->head_fields) if $self->{head_set} && !$self->{out}->has_head;
    $self->{out}->flush;
    return;
}

# The file's bytes (from $offset, $length of them) as part of the body; APR::Const::SUCCESS, or
# the error number, which dies when nobody looks at it (as mod_perl does)
sub sendfile ($self, $file, $offset = 0, $length = undef) {
    my $fh;
    if (!open($fh, '<:raw', $file)) {
        my $errno = $! + 0;
        die "Can't open \"$file\" for sendfile: $!\n" unless defined wantarray;
        return $errno;
    }
    seek $fh, $offset, 0 if $offset;
    my $left = $length // (-s $fh) - $offset;
    while ($left > 0 && CORE::read($fh, my $chunk, $left < 65_536 ? $left : 65_536)) {
        $left -= length $chunk;
        $self->_send($chunk);
    }
    return 0;
}

sub write ($self, $buffer, $length = undef, $offset = 0) {
    return $self->_send(substr $buffer, $offset, $length // length($buffer) - $offset);
}

sub _send ($self, $text) {
    my $out = $self->{out}
        // die 'Perennial sends a body only from the response phase, not from '
        . Perennial::ModPerl->phase
        . ": return a status (with custom_response for its text) instead\n";
    utf8::encode($text) if utf8::is_utf8($text);
    $out->add($text);
    return length $text || '0E0';
}

1;

__END__

=head1 NAME

Perennial::ModPerl::RequestIO - print, read and sendfile on mod_perl's $r

=head1 SYNOPSIS

    $r->print("Hello\n");
    $r->printf("%d items\n", $count);
    $r->read(my $body, $r->headers_in->{'Content-Length'});
    $r->sendfile('/srv/files/report.pdf');
    $r->rflush;

=head1 DESCRIPTION

C<print>, C<printf>, C<puts> and C<write> return the number of bytes sent (C<0E0> for none);
C<read> returns the number read; C<rflush> sends the head and what is buffered;
C<discard_request_body> reads and drops the body; C<sendfile> returns C<0> (SUCCESS) or the
error number, and dies in void context when the file cannot be read.

=cut
