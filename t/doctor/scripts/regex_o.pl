#!/usr/bin/perl
# A /o regex: the pattern is the first request's forever
use strict;
use CGI;
my $q    = CGI->new;
my $word = $q->param('word') // 'x';
my $text = "a b c x y z";
print $q->header('text/plain'), ($text =~ /$word/o ? "found $word\n" : "no $word\n");
