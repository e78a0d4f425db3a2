use v5.36;

# Three cleanup handlers (psgix.cleanup) a request: the first and the last write a line each to
# the file CLEANUP_LOG names (with the status the request was sent with), the second dies. Each
# answer is whole, so that the loop in C serves it.
my $file = $ENV{CLEANUP_LOG} or die "CLEANUP_LOG is not set\n";

sub ($env) {
    my $path = $env->{PATH_INFO};
    my $note = sub ($line) {
        open my $fh, '>>', $file or die "Can't write $file: $!\n";
        print {$fh} "$line\n";
        close $fh;
    };
    push @{$env->{'psgix.cleanup.handlers'}},
        sub ($e) { $note->("first $path " . ($e->{'perennial.status'} // '-')) },
        sub ($e) { die "the second failed for $path\n" },
        sub ($e) { $note->("third $path") };
    return [
        $path eq '/gone' ? 410 : 200,
        ['Content-Type' => 'text/plain', 'Content-Length' => 3], ["ok\n"]
    ];
};
