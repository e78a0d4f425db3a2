#!/usr/bin/perl
# content_type with a Content-Type in headers_out (one header: content_type's), and no_cache
use strict;
use Apache2::RequestRec ();
use Apache2::Response   ();
use APR::Table          ();
my $r = shift;
$r->content_type('text/plain');
$r->headers_out->set('Content-Type' => 'text/csv');
$r->no_cache(1);
print "typed\n";
