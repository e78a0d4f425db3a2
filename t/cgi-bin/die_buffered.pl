#!/usr/bin/perl
# Dies after its head and part of its body, still buffered
print "Content-Type: text/plain\n\n";
print "buffered body\n";
die "died after buffered output";
