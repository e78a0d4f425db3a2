#!/usr/bin/perl
# An internal redirect: the other script answers
use strict;
use Apache2::RequestRec ();
use Apache2::SubRequest ();
my $r = shift;
$r->internal_redirect('/registry/target.pl?from=redirect');
