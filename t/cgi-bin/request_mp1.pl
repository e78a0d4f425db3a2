#!/usr/bin/perl
# mod_perl 1: Apache->request, its args as pairs in list context
my $r    = Apache->request;
my %args = $r->args;
$r->send_http_header('text/plain');
print join(',', map {"$_=$args{$_}"} sort keys %args), ' first=', (shift == $r ? 'same' : 'other'),
    "\n";
