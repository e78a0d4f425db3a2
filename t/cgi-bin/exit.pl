#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "before exit $$\n";
exit 0;
print "after exit\n";
