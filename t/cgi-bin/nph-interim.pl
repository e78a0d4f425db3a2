#!/usr/bin/perl
# An nph- script that writes an interim 100 Continue, then its own final response
$| = 1;
print "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfinal\n";
