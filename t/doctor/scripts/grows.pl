#!/usr/bin/perl
# A global list that grows: every request adds to what the last ones left
use CGI;
$q = CGI->new;
push @seen, $q->param('item') // 'nothing';
$hits++;
print $q->header('text/plain'), "seen: @seen ($hits)\n";
