#!/usr/bin/perl
# Says which process compiled it: the manager when PerlPreloadScripts preloaded it
my $compiled_in;
BEGIN { $compiled_in = $$ }
print "Content-Type: text/plain\n\n$compiled_in $$\n";
