use v5.36;

# Three cleanup handlers (psgix.cleanup) a request: the first and the last write a line each to
# the file CLEANUP_LOG names (with the status the request was sent with), the second dies (for
# /jump, leaves by `last` outside a loop); the last asks the worker to exit for /retire. Each
# answer, the worker's pid, is whole, so that the loop in C serves it.
my $file = $ENV{CLEANUP_LOG} or die "CLEANUP_LOG is not set\n";

sub ($env) {
    my $path = $env->{PATH_INFO};
    my $note = sub ($line) {
        open my $fh, '>>', $file or die "Can't write $file: $!\n";
        print {$fh} "$line\n";
        close $fh;
    };
    my $second = $path eq '/jump'
        ? sub ($e) {last}    ## no critic (ProhibitExitingSubroutine) what the server survives
        : sub ($e) { die "the second failed for $path\n" };
    push @{$env->{'psgix.cleanup.handlers'}},
        sub ($e) { $note->("first $path " . ($e->{'perennial.status'} // '-')) }, $second,
        sub ($e) {
        $note->("third $path");
        $e->{'psgix.harakiri.commit'} = 1 if $path eq '/retire';    # An exit asked for afterwards
        };
    my $body = "$$\n";                                              # The worker's pid
    return [
        $path eq '/gone' ? 410 : 200,
        ['Content-Type' => 'text/plain', 'Content-Length' => length $body], [$body]
    ];
};
