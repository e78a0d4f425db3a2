#!/usr/bin/perl
# A mod_perl 1 script: Apache->request and send_http_header
my $r = Apache->request;
$r->content_type('text/html');
$r->no_cache(1);
$r->send_http_header;
$r->print("<p>sent by ", $r->the_request, "</p>\n");
