#!/usr/bin/perl
# Prints the Status its query names (?100+Continue), then a body
my $status = $ENV{QUERY_STRING} =~ tr/+/ /r;
print "Status: $status\nContent-Type: text/plain\n\nasked for $status\n";
