#!/usr/bin/perl
print "HTTP/1.0 203 Non-Authoritative Information\r\nContent-Type: text/plain\r\n\r\nnph body\n";
