#!/usr/bin/perl
# Blocks in a system call for ten minutes
print "Content-Type: text/plain\n\n";
nap();
print "woke\n";
sub nap { sleep 600 }
