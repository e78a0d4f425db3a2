#!/usr/bin/perl
$| = 1;
print "Content-Type: text/plain\n\n";
print "body\n";
END { print "END ran\n" }
