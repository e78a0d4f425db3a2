#!/usr/bin/perl
# A global handle opened and locked, never closed: it stays open, with its lock
use strict;
use Fcntl qw(:flock);
use CGI;
my $q = CGI->new;
open(COUNTER, '>>', '/dev/null') or die "Can't open: $!";
flock(COUNTER, LOCK_EX);
print $q->header('text/plain'), "locked\n";
