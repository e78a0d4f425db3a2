#!/usr/bin/perl
use strict;
use Apache2::RequestRec ();
my $r = shift;
$r->content_type('text/plain');
print 'args=', $r->args, ' initial=', $r->is_initial_req, ' prev=',
    ($r->prev ? $r->prev->uri : 'none'), "\n";
