#!/usr/bin/perl
# Prints a first part, then waits (bounded) for the test to say it has read it
use Time::HiRes ();
$| = 1;
my $marker = $ENV{QUERY_STRING};
print "Content-Type: text/plain\n\n";
print "part one\n";
my $seen = 'no';
for (1 .. 100) {
    if (-e $marker) { $seen = 'yes'; last }
    Time::HiRes::sleep(0.05);
}
print "marker seen: $seen\n";
