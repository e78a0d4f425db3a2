#!/usr/bin/perl
# Last-Modified and preconditions: 304 for a client that has the page
use strict;
use Apache2::RequestRec ();
use Apache2::Response   ();
use Apache2::Const -compile => qw(OK);
my $r = shift;
$r->content_type('text/plain');
$r->update_mtime(1_000_000_000);
$r->update_mtime(999_999_999);    # older: no change
$r->set_last_modified;
$r->set_etag;                     # From the script file, as Apache's FileETag MTime Size
my $rc = $r->meets_conditions;
if ($rc != Apache2::Const::OK) { $r->status($rc); return }
print "mtime=", $r->mtime, "\n";
