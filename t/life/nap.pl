#!/usr/bin/perl
# Sleeps past SlowRequestTime: the sleep must last as long as it was asked to (perl's sleep
# counts whole seconds of the clock, so a loaded machine may say 3)
print "Content-Type: text/plain\n\n";
my $slept = sleep 2;
print $slept >= 2 ? "slept its 2 seconds\n" : "woken after $slept\n";
