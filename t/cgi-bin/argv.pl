#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "argv=", join('|', @ARGV), "\n";
