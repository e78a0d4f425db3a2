#!/usr/bin/perl
# Nothing printed: the status set through $r decides (?302 with a Location, ?404, ?204, ?custom)
use strict;
use Apache2::RequestRec ();
use Apache2::Response   ();
my $r    = shift;
my $what = $r->args;
$r->err_headers_out->set('X-Kept' => 'yes');
$r->headers_out->set('X-Dropped' => 'on errors');

if ($what eq '302') {
    $r->headers_out->set(Location => 'http://example.com/moved');
    $r->status(302);
}
elsif ($what eq '404')    { $r->status(404) }
elsif ($what eq '204')    { $r->status(204) }
elsif ($what eq 'custom') { $r->custom_response(403, 'Come back tomorrow'); $r->status(403) }
else                      { $r->content_type('text/plain') }
