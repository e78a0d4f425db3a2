#!/usr/bin/perl
print "Content-Type: text/plain\n\nnot executable\n";
