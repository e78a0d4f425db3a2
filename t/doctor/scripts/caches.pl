#!/usr/bin/perl
# A global set only when empty keeps the first request's value; a directory handle left open
use strict;
use CGI;
our $started;
$started ||= scalar localtime;
opendir(DIR, '.') or die "Can't read .: $!";
my $q = CGI->new;
print $q->header('text/plain'), "up since $started\n";
