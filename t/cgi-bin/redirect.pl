#!/usr/bin/perl
print "Location: http://example.com/elsewhere\n\n";
