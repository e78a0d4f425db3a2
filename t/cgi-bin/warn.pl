#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
warn "a warning from the script\n";
print "after warn\n";
