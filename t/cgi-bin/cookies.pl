#!/usr/bin/perl
print "Content-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\ncookies\n";
