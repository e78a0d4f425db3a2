#!/usr/bin/perl
# Redirects to itself, by a printed local Location or by $r->internal_redirect (?r): a loop
my $r = shift;
if   ($ENV{QUERY_STRING} eq 'r') { $r->internal_redirect("$ENV{SCRIPT_NAME}?r") }
else                             { print "Location: $ENV{SCRIPT_NAME}\n\n" }
