#!/usr/bin/perl
# A global that keeps the last request's value: set only when the form sends it
use CGI;
$q    = CGI->new;
$user = $q->param('user') if defined $q->param('user');
print $q->header('text/plain'), "user: ", ($user // 'nobody'), "\n";
