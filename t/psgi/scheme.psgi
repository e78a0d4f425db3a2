# What an application behind a TLS front sees of its client: the scheme and the address
use v5.36;
sub ($env) {
    [200, ['Content-Type' => 'text/plain'], ["$env->{'psgi.url_scheme'} $env->{REMOTE_ADDR}\n"]];
};
