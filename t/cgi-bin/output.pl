#!/usr/bin/perl
BEGIN { $compiled_at_begin++ }
$| = 1;    # print and syswrite mixed: without this, mod_cgi would see them out of order too
printf "Content-Type: %s\n\n", 'text/plain';
syswrite STDOUT, "syswrite ok\n";
my $old = select STDOUT;
$| = 1;
print "select and autoflush ok\n";
select $old;
binmode STDOUT;
print "script=", ($0 =~ m{/output\.pl\z} ? 'path' : $0), "\n";
print STDERR "to stderr\n";
print "begin=", ($compiled_at_begin ? 'ran' : 'no'), "\n";
