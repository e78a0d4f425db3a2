#!/usr/bin/perl
# The request body through $r->read; a file through sendfile; a CGI head through send_cgi_header
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use Apache2::Response   ();
my $r = shift;
my ($got, $buf) = ('', '');
while ($r->read($buf, 3)) { $got .= $buf }
my $head = "Content-Type: text/plain\nX-Cgi: yes\n\n";    # mod_perl changes the buffer it reads
$r->send_cgi_header($head);
$r->print("read=$got\n");
(my $file = $r->filename) =~ s{[^/]+\z}{sendfile.txt};
$r->sendfile($file);
