#!/usr/bin/perl -w
use strict;
my $counter = 0;
print "Content-Type: text/plain\n\n";
counter_up();
sub counter_up { $counter++; print "Counter: $counter\n" }
