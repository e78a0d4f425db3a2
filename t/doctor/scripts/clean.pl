#!/usr/bin/perl
# Clean: everything it keeps is declared inside the request
use strict;
use warnings;
use CGI;
my $q    = CGI->new;
my $name = $q->param('name') // 'world';
print $q->header('text/plain'), "Hello, $name\n";
