#!/usr/bin/perl
die "die_early: died before any output\n" if 1;
print "Content-Type: text/plain\n\nnever\n";
