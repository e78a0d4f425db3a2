#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
my @lines = <DATA>;
print "data: ", scalar(@lines), " lines, first: $lines[0]";
__DATA__
first data line
second data line
