#!/usr/bin/perl
# Writes to STDERR, then (with ?untie) unties it, as no script should
print STDERR "stderr line from $ENV{QUERY_STRING}\n";
untie *STDERR if ($ENV{QUERY_STRING} // '') eq 'untie';
print "Content-Type: text/plain\n\nok\n";
