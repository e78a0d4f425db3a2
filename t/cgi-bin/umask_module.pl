#!/usr/bin/perl
# Its umask is set by a module it loads, compiled once per worker
use FindBin ();
use lib "$FindBin::Bin/lib";
require Fixture::Umask;
print "Content-Type: text/plain\n\n";
print "umask=", sprintf('%03o', umask), "\n";
Fixture::Umask::tighten();
