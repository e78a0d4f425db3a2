#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
$counter++;
print "counted $counter\n";
