#!/usr/bin/perl
# State kept where the compiled code does not show it: a string eval adds to a package variable
use strict;
use CGI;
our $visits;
my $q = CGI->new;
eval '$visits++; 1' or die $@;
print $q->header('text/plain'), "visits: $visits\n";
