use v5.36;

# What a request without a body reads from psgi.input, and what it may do to the handle after:
# ?close closes it, ?reopen opens it again on this file, ?binmode gives it a layer
sub ($env) {
    my $in   = $env->{'psgi.input'};
    my $n    = read($in, my $buf, 100);
    my $what = defined $n ? "read $n [$buf]" : 'read failed';
    my $q    = $env->{QUERY_STRING};
    if    ($q eq 'close')   { close $in }
    elsif ($q eq 'reopen')  { open($in, '<', __FILE__) or die "reopen: $!" }
    elsif ($q eq 'binmode') { binmode $in, ':encoding(UTF-16)' }
    return [200, ['Content-Type' => 'text/plain', 'Content-Length' => length $what], [$what]];
};
