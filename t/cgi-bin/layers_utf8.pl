#!/usr/bin/perl
# binmode STDOUT, ':utf8': the client gets the UTF-8 bytes, as from mod_cgi
binmode STDOUT, ':utf8';
print "Content-Type: text/plain; charset=utf-8\n\n";
print "smile \x{263a} caf\x{e9}";
