use v5.36;

# Asks the server to retire this worker after the response
sub ($env) {
    $env->{'psgix.harakiri.commit'} = 1 if $env->{'psgix.harakiri'};
    return [200, ['Content-Type' => 'text/plain'], [$$]];
};
