#!/usr/bin/perl
# Two libraries without a package, required by path: one keeps state in its file-level my
# variables, one only reads them
use strict;
use warnings;
use CGI;
require "./lib_state.pl";
require "./lib_clean.pl";
my $q = CGI->new;
print $q->header('text/plain'), greeting(), ' visitor ', next_visitor($q->param('name')), "\n";
