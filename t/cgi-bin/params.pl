#!/usr/bin/perl
use CGI qw(:standard);
print header('text/plain');
print "x=", (defined param('x') ? param('x') : '(none)'), "\n";
