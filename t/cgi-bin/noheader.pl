#!/usr/bin/perl
print "just some text without a header\n";
