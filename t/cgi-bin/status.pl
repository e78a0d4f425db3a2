#!/usr/bin/perl
print "Status: 404 Not Found\nContent-Type: text/plain\n\nno such thing\n";
