# Shows the PSGI environment a request gets, and which worker served it
use v5.36;

sub ($env) {
    my $text = "worker pid $$\n\n";
    $text .= "$_ = " . ($env->{$_} // '') . "\n" for sort grep { !ref $env->{$_} } keys %$env;
    return [200, ['Content-Type' => 'text/plain; charset=utf-8'], [$text]];
};
