# A streamed response: no Content-Length, so HTTP/1.1 clients get it chunked
use v5.36;

sub ($env) {
    return sub ($respond) {
        my $writer = $respond->([200, ['Content-Type' => 'text/plain']]);
        $writer->write("line $_\n") for 1 .. 5;
        $writer->close;
    };
};
