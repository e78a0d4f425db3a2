# Answers with the request body: Content-Length and chunked uploads alike
use v5.36;

sub ($env) {
    my $body = '';
    while ($env->{'psgi.input'}->read(my $buf, 65536)) { $body .= $buf }
    return [200, ['Content-Type' => 'application/octet-stream'], [$body]];
};
