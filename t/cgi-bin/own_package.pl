#!/usr/bin/perl
# Globals of a package the script declares itself (Blosxom's `package blosxom; use vars`),
# and a file-level my that a named sub uses, in a script with no warnings of its own
package Tally;
use vars qw($output);
my $seen = 0;
sub add { $seen++; $output .= "x" }
add();
print "Content-Type: text/plain\n\n", "tally $output";
