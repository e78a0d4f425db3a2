use v5.36;

# Dies at different points of a streamed response
sub ($env) {
    my $when = $env->{PATH_INFO};
    return sub ($respond) {
        die "before the head\n" if $when eq '/before';
        my $w = $respond->([200, ['Content-Type' => 'text/plain']]);
        die "after the head, before any body\n" if $when eq '/head';
        $w->write("partial\n");
        die "after some body\n";
    };
};
