#!/usr/bin/perl
# Headers set through $r and a printed CGI head both count (PerlOptions +ParseHeaders)
use strict;
use Apache2::RequestRec ();
my $r = shift;
$r->headers_out->set('X-From-R' => 'yes');
$r->err_headers_out->add('Set-Cookie' => 'r=1');
print "Content-Type: text/plain\nX-Printed: yes\nSet-Cookie: p=2\n";
print "Status: 201 Made\n\n";
print "body\n";
