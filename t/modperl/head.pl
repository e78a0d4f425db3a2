#!/usr/bin/perl
# A head set through $r, the body printed both ways
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
my $r = shift;
$r->content_type('text/plain; charset=utf-8');
$r->headers_out->set('X-Served-By' => 'request object');
$r->headers_out->add('X-Multi' => 'one');
$r->err_headers_out->add('Set-Cookie' => 'a=1');
$r->err_headers_out->add('Set-Cookie' => 'b=2');
$r->status(202);
my $n = $r->print("through \$r\n");
print "through STDOUT\n";
$r->printf("%s=%d\n", 'printed', $n);
$r->puts("puts\n");
$r->write("write it all\n", 6);
$r->write("\n");
$r->rflush;
print "after rflush\n";
