#!/usr/bin/perl
# use open at compile time pushes :encoding(UTF-8) on STDOUT and STDERR (Catalyst's way)
use open qw(:std :encoding(UTF-8));
BEGIN { print STDERR "said while compiling \x{263a}\n" }
warn "a warning with \x{263a}\n";
print "Content-Type: text/plain; charset=utf-8\n\n";
print "open \x{263a} caf\x{e9}";
