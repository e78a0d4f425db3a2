#!/usr/bin/perl
# A head set through $r is read by the rules of a printed one: ?redirect, ?bad (CR LF)
my $r = Apache2::RequestUtil->request;
if   ($r->args eq 'redirect') { $r->headers_out->set(Location => 'http://example.com/moved') }
else                          { $r->headers_out->set('X-Bad'  => "a\r\nSet-Cookie: evil=1") }
$r->send_http_header;
$r->print("body\n");
