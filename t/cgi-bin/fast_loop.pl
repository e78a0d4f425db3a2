#!/usr/bin/perl
# A FastCGI accept loop, shaped as munin-cgi-html and SmokePing write theirs: set-up before the
# loop (kept in lexicals), then one request per turn
use strict;
use warnings;
use CGI::Fast;
use open   qw(:std :encoding(iso-8859-1));    # A layer the handles keep in every turn
use Encode qw(decode);

my $config = {started_by => $$};              # munin reads its configuration here, once
my $turns  = 0;
while (my $q = CGI::Fast->new) {
    $turns++;
    $| = $q->param('stream') ? 1 : 0;    # Streamed: an HTTP/1.0 answer ends with the connection
    print $q->header(-type => 'text/plain', -charset => 'iso-8859-1');
    my $x = $q->param('x') // '(none)';
    print "turn $turns x=$x method=$ENV{REQUEST_METHOD} pid=$$ set up by=$config->{started_by}\n";
    print decode('UTF-8', "caf\xc3\xa9"), "\n";    # Text: the layer makes it Latin-1
    print STDERR "fast_loop turn $turns\n";
    last if $x eq 'last';
}
