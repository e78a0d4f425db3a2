#!/usr/bin/perl
# :crlf turns each newline of the body (and of the head) into CRLF; no layer: wide characters
# go out as UTF-8 with perl's warning
binmode STDOUT, ':crlf';
print "Content-Type: text/plain\n\n";
print "a\nb\n";
binmode STDOUT;
print "wide \x{263a}";
