#!/usr/bin/perl
# A child process reads the request body the script left unread
print "Content-Type: text/plain\n\n";
print "cat read: ";
system 'cat';
print "\nend\n";
