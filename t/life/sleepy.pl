#!/usr/bin/perl
# Blocks in a system call for ten minutes
print "Content-Type: text/plain\n\n";
sleep 600;
print "woke\n";
