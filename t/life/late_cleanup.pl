#!/usr/bin/perl
# Answers at once, then a cleanup runs past the location's RequestDeadline (t/prefork/deadline.t)
my $r = shift;
$r->pool->cleanup_register(sub { sleep 10 });
print "Content-Type: text/plain\n\nanswered\n";
