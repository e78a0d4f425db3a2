use v5.36;

# Forty-eight megabytes: more than the kernel's socket buffers on loopback hold, with room to spare
my $body = 'x' x (48 << 20);
sub ($env) { [200, ['Content-Type' => 'text/plain'], [$body]] };
