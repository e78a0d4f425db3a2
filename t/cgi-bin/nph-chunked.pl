#!/usr/bin/perl
# An nph- script that frames its own body
$| = 1;
print "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
print "5\r\nhello\r\n";
print "0\r\n\r\n";
