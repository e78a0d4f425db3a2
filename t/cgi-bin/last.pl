#!/usr/bin/perl
# A loop control at the script's top level: perl refuses it, and the script dies after its head
print "Content-Type: text/plain\n\nbefore\n";
last;
print "after\n";
