use v5.36;

# Answers with what the application saw: method, lengths and the body itself
sub ($env) {
    my $body = '';
    while ($env->{'psgi.input'}->read(my $buf, 65536)) { $body .= $buf }
    return [200, ['Content-Type' => 'text/plain', 'X-Length' => length $body,
        'X-Content-Length' => $env->{CONTENT_LENGTH} // 'none'], [$body]];
};
