#!/usr/bin/perl
print "Content-Type: text/plain\n\n";

die "died on purpose";
