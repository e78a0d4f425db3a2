#!/usr/bin/perl -w
# require "countlib.pl" works because the script runs in its own directory
use CGI;
use strict;
require "./countlib.pl";

my $q = CGI->new;
print $q->header('text/plain');
print "Counter: ", lib_counter_up(), "\n";
