#!/usr/bin/perl
# Sleeps past SlowRequestTime: the sleep must last as long as it was asked to
print "Content-Type: text/plain\n\n";
my $slept = sleep 2;
print "slept $slept\n";
