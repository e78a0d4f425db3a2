use v5.36;

# Says what it was asked ("METHOD PATH QUERY BODY-LENGTH"), in the form the query names:
# ?stream (the streaming interface), ?handle (a file handle body), ?die (it dies), ?cleanup
# (a cleanup handler), else an array body
sub ($env) {
    my $body = '';
    while ($env->{'psgi.input'}->read(my $buf, 65536)) { $body .= $buf }
    my $q    = $env->{QUERY_STRING};
    my $said = "$env->{REQUEST_METHOD} $env->{PATH_INFO} $q " . length($body) . "\n";
    die "asked to die\n" if $q eq 'die';
    my @head = ('Content-Type' => 'text/plain');
    if ($q eq 'stream') {
        return sub ($respond) {
            my $w = $respond->([200, \@head]);
            $w->write($said);
            $w->close;
        };
    }
    if ($q eq 'handle') {
        open(my $fh, '<', \$said) or die "Can't open a string: $!\n";
        return [200, \@head, $fh];
    }
    push @{$env->{'psgix.cleanup.handlers'}}, sub ($e) { $e->{cleaned} = 1 }
        if $q eq 'cleanup';
    return [200, [@head, 'Content-Length' => length $said], [$said]];
};
