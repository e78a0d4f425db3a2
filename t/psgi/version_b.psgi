use v5.36;

sub ($env) { [200, ['Content-Type' => 'text/plain'], ["B $$"]] };
