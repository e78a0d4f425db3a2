#!/usr/bin/perl
use FindBin ();
use lib "$FindBin::Bin/lib";
print "Content-Type: text/plain\n\n";
require Fixture::Greeting;
print Fixture::Greeting::text(), "\n";
print "lib dirs in \@INC: ", scalar(grep {m{/cgi-bin/lib\z}} @INC), "\n";
