#!/usr/bin/perl
use FindBin ();
require "$FindBin::Bin/helper.pl";
print "Content-Type: text/plain\n\n", helper_says(), "\n";
