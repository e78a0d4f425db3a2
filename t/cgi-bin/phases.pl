#!/usr/bin/perl -w
# BEGIN, CHECK and INIT run once per compile, in perl's order, before the main code
our @order;
BEGIN { push @order, 'BEGIN' }
INIT  { push @order, 'INIT' }
CHECK { push @order, 'CHECK' }
push @order, 'main';
print "Content-Type: text/plain\n\n@order\n";
@order = ();
