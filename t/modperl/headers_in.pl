#!/usr/bin/perl
# headers_in as a script reads it: get before anything else, in both contexts and any case; the
# hash's view; then a field set, one taken out, and the fields seen by do
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use APR::Table          ();
my $r = shift;
$r->content_type('text/plain');
my $in    = $r->headers_in;
my @list  = $in->get('x-test');
my @none  = $in->get('X-None');
my @lines = (
    'get=' . $in->get('X-Test'),
    'list=' . join(',', @list) . ' (' . scalar(@list) . ')',
    'none=' . scalar(@none),
    'underscore=' .      ($in->get('X_Test')   // 'undef'),
    'trailing hyphen=' . ($in->get('X-Trail-') // 'undef') . ' ' . ($in->get('X-Trail') // 'undef'),
    'accept=' .          ($in->get('ACCEPT')         // 'undef'),
    'type=' .            ($in->get('Content-Type')   // 'undef'),
    'length=' .          ($in->get('Content-Length') // 'undef'),
    'hash=' .            ($in->{'X-TEST'}            // 'undef'),
    'exists=' .          (exists $in->{'x-test'} ? 1 : 0) . (exists $in->{'x-none'} ? 1 : 0),
);
$in->set('X-Added' => 'one');
$in->unset('Accept');
my @seen;
$in->do(sub { push @seen, lc $_[0] if $_[0] =~ /\Ax-|\Aaccept\z/i; 1 });
push @lines,
    'added=' . $in->get('x-added'),
    'accept after unset=' . ($in->get('Accept') // 'undef'),
    'seen=' . join(',', sort @seen),
    'keys=' . join(',', sort grep {/\Ax-/i} map {lc} keys %$in),
    'trailing hyphen, made='
    . ($in->get('x-trail-') // 'undef') . ' '
    . ($in->get('x-trail')  // 'undef');
print map {"$_\n"} @lines;
