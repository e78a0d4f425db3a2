#!/usr/bin/perl
# Moves to / and stays there: the executor puts the working directory back after the request
chdir '/' or die "Can't chdir to /: $!";
print "Content-Type: text/plain\n\nmoved\n";
