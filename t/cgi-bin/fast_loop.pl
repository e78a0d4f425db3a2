#!/usr/bin/perl
# A FastCGI accept loop, shaped as munin-cgi-html and SmokePing write theirs: set-up before the
# loop (kept in lexicals), then one request per turn
use strict;
use warnings;
use CGI::Fast;

my $config = {started_by => $$};    # munin reads its configuration here, once
my $turns  = 0;
while (my $q = CGI::Fast->new) {
    $turns++;
    print $q->header(-type => 'text/plain', -charset => 'utf-8');
    my $x = $q->param('x') // '(none)';
    print "turn $turns x=$x method=$ENV{REQUEST_METHOD} pid=$$ set up by=$config->{started_by}\n";
    print STDERR "fast_loop turn $turns\n";
    last if $x eq 'last';
}
