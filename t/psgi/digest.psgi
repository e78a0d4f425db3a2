use v5.36;

# Reads the whole body and answers with its length, a checksum, and whether it is a real file
sub ($env) {
    my $in = $env->{'psgi.input'};
    my $body = '';
    while ($in->read(my $buf, 65536)) { $body .= $buf }
    my $file = defined fileno($in) && fileno($in) >= 0 ? 1 : 0;
    my $text = sprintf 'length %d sum %d file %d', length $body, unpack('%32C*', $body), $file;
    return [200, ['Content-Type' => 'text/plain'], [$text]];
};
