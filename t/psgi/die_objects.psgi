use v5.36;

# Dies with exception objects that cannot be made text: overloading with no "" and no fallback,
# and a "" that dies itself; in the application, in its streaming callback and in a cleanup
# handler
package NoText {
    use overload 'bool' => sub {1}, fallback => 0;
}

package Bomb {
    use overload '""' => sub { die "no text for you\n" }, 'bool' => sub {1};
}

package main;
sub ($env) {
    my $path = $env->{PATH_INFO};
    die bless {}, 'NoText' if $path eq '/notext';
    die bless {}, 'Bomb'   if $path eq '/bomb';
    return sub ($respond) { die bless {}, 'Bomb' }
        if $path eq '/stream';
    push @{$env->{'psgix.cleanup.handlers'}}, sub ($e) { die bless {}, 'NoText' }
        if $path eq '/cleanup';
    return [200, ['Content-Type' => 'text/plain'], ["pid $$\n"]];
};
