# The smallest PSGI application: the benchmark's hello world
use v5.36;

sub ($env) { [200, ['Content-Type' => 'text/plain'], ["Hello, world!\n"]] };
