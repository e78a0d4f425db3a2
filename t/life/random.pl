#!/usr/bin/perl
# A random number and the worker: workers must not share their random sequence
print "Content-Type: text/plain\n\n", int(rand 1_000_000_000), " $$\n";
