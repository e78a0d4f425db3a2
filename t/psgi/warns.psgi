use v5.36;

# Warns, as applications do
sub ($env) {
    warn "careful with $env->{PATH_INFO}\n";
    return [200, ['Content-Type' => 'text/plain'], ["warned\n"]];
};
