#!/usr/bin/perl
# STDERR closed in the middle of the request keeps the layer the script gave it as it compiled
use open qw(:std :encoding(UTF-8));
print "Content-Type: text/plain\n\n";
print STDERR "before close: caf\x{e9}\n";
close STDERR;
print STDERR "after close: caf\x{e9}\n";
print "done\n";
