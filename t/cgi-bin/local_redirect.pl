#!/usr/bin/perl
my $mode = (split m{/}, $ENV{SCRIPT_NAME})[1];
print "Location: /$mode/data.pl\n\n";
