#!/usr/bin/perl
# A script whose compile never ends: the doctor stops its examination and says so
BEGIN { sleep 600 }
print "Content-Type: text/plain\n\nnever\n";
