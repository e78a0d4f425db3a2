#!/usr/bin/perl
# Busy for a second and a half, then answers: slow, not stuck
use Time::HiRes ();
my $until = Time::HiRes::time() + 1.5;
1 while Time::HiRes::time() < $until;
print "Content-Type: text/plain\n\ndone\n";
