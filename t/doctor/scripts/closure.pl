#!/usr/bin/perl
# A file-level my used by a named sub: the sub keeps the first request's variable
use strict;
use warnings;
use CGI;
my $q     = CGI->new;
my $count = $q->param('count') // 0;
sub show { return "count: $count\n" }
print $q->header('text/plain'), show();
