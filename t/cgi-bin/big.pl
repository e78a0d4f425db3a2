#!/usr/bin/perl
# More output than the executor buffers: it must stream, whole and in order
print "Content-Type: text/plain\n\n";
print sprintf("%06d\n", $_) for 1 .. 20000;
