#!/usr/bin/perl
# A Perl string with wide characters through $r->print: its UTF-8 bytes
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
my $r = shift;
$r->content_type('text/plain; charset=utf-8');
$r->print("caf\x{e9} \x{263a}\n");
