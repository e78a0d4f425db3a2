#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
eval { exit 0; 1 };
print "caught: ", (defined $@ && length $@ ? "yes" : "no"), "\n";
