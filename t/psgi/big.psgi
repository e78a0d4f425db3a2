use v5.36;

# Eight megabytes, more than the socket buffers hold
my $body = 'x' x (8 << 20);
sub ($env) { [200, ['Content-Type' => 'text/plain'], [$body]] };
