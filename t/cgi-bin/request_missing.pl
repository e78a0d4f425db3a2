#!/usr/bin/perl
# A mod_perl method Perennial does not have: a clear error naming it, this file and the line
my $r = shift;
$r->add_output_filter(sub { });
