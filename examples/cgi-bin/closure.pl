#!/usr/bin/perl -w
# The talk's closure trap: a named sub using a file-level my. Under Registry the script becomes
# a sub, so counter_up keeps the first request's $counter ("Variable will not stay shared").
use CGI;
use strict;

my $q = CGI->new;
my $counter = 0;
print $q->header('text/plain');
counter_up();

sub counter_up {
    $counter++;
    print "Counter: $counter\n";
}
