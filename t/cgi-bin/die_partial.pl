#!/usr/bin/perl
# Dies after its head and part of its body went out
$| = 1;
print "Status: 201 Created\nContent-Type: text/plain\n\n";
print "partial body\n";
die "died after output";
