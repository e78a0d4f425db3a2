# Responses of each kind the server writes, for t/logs/loop_lines.t: an array, a header twice,
# a 404, a stream, a delayed response, a body read, a die
sub {
    my $env  = shift;
    my $path = $env->{PATH_INFO};
    die "on purpose\n" if $path eq '/die';
    return sub { $_[0]->([201, ['Content-Type' => 'text/x-delayed'], ['later']]) }
        if $path eq '/delayed';
    return sub {
        my $w = $_[0]->([200, ['Content-Type' => 'text/x-stream']]);
        $w->write($_) for 'a', 'bc';
        $w->close;
        }
        if $path eq '/stream';
    return [200, ['Content-Type' => 'text/plain', 'X-Multi' => 'one', 'X-Multi' => 'two'], ['m']]
        if $path eq '/multi';
    return [404, ['Content-Type' => 'text/plain'], ['none here']] if $path eq '/none';
    my $body = '';
    if (my $len = $env->{CONTENT_LENGTH}) { $env->{'psgi.input'}->read($body, $len) }
    return [200, ['Content-Type' => 'text/plain'], ["hello $body"]];
    }
