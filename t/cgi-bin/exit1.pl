#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "before exit(1)\n";
exit 1;
