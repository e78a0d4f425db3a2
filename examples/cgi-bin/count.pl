#!/usr/bin/perl
# A global counter: 1 on every request under CGI and PerlRun, growing per worker under Registry
use CGI;

my $q = CGI->new;
print $q->header('text/plain');
$counter++;
print "counted $counter\n";
