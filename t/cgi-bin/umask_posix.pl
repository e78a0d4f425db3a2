#!/usr/bin/perl
# Sets its umask with POSIX::umask, which is CORE::umask
use POSIX ();
print "Content-Type: text/plain\n\n";
print "umask=", sprintf('%03o', umask), "\n";
POSIX::umask(077);
