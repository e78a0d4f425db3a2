#!/usr/bin/perl
# What Perennial puts back after each request: %SIG, the working directory, the umask, $0; exit
use strict;
use CGI;
my $q = CGI->new;
$SIG{ALRM} = sub { die "timeout\n" };
chdir '/';
umask 077;
$0 = 'handled';
print $q->header('text/plain'), "handled\n";
exit 0;
