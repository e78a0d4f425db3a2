#!/usr/bin/perl
use Cwd ();
print "Content-Type: text/plain\n\n";
print "cwd=", Cwd::getcwd(), "\n";
open(my $fh, '<', 'data.txt') or die "no data.txt: $!";
print "data.txt=", scalar <$fh>;
