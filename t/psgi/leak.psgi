use v5.36;

# Keeps 4 MB more of private memory on every request, and answers with the worker's pid
my @kept;

sub ($env) {
    push @kept, 'x' x (4 * 1024 * 1024);
    return [200, ['Content-Type' => 'text/plain'], [$$]];
};
