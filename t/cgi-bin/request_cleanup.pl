#!/usr/bin/perl
# Cleanups run when the request ends, and see its status; one that dies is logged by name and
# the next still runs
my $r = shift;
$r->push_handlers(PerlCleanupHandler => sub { die "cleanup died on purpose\n" });
$r->pool->cleanup_register(
    sub {
        open(my $fh, ">", $_[0]) or die "$_[0]: $!";
        print {$fh} "ran, status ", $r->status, "\n";
    },
    $r->args
);
print "Status: 202 Accepted\nContent-Type: text/plain\n\nok\n";
