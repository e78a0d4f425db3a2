use v5.36;

# The application of bench/slowloris.pl: / is hello world, /big a 16 MB response for the slow
# readers (larger than the kernel's socket buffers, so the server must wait for the reader)
my $block = 'x' x 65_536;
sub ($env) {
    return [200, ['Content-Type' => 'text/plain', 'Content-Length' => 6], ["Hello\n"]]
        unless $env->{PATH_INFO} eq '/big';
    return [200, ['Content-Type' => 'application/octet-stream', 'Content-Length' => 256 * 65_536],
        [($block) x 256]];
};
