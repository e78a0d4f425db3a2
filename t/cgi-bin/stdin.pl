#!/usr/bin/perl
binmode STDIN;
binmode STDOUT;
read(STDIN, my $body, $ENV{CONTENT_LENGTH} || 0);
print "Content-Type: application/octet-stream\n\n";
print length($body), ":", unpack('H*', $body);
