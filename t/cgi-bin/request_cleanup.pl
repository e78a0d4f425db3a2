#!/usr/bin/perl
# Cleanups run when the request ends; one that dies is logged by name and the next still runs
my $r = shift;
$r->push_handlers(PerlCleanupHandler => sub { die "cleanup died on purpose\n" });
$r->pool->cleanup_register(sub { open(my $fh, ">", $_[0]) or die "$_[0]: $!"; print {$fh} "ran\n" },
    $r->args);
print "Content-Type: text/plain\n\nok\n";
