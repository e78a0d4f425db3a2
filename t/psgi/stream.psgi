use v5.36;

# A streamed response without Content-Length
sub ($env) {
    return sub ($respond) {
        my $w = $respond->([200, ['Content-Type' => 'text/plain']]);
        $w->write("line $_\n") for 1 .. 2;
        $w->close;
    };
};
