#!/usr/bin/perl
# APR::Table as mod_perl's
use strict;
use Apache2::RequestRec ();
use APR::Table          ();
use APR::Const -compile => qw(:table);
my $r = shift;
$r->content_type('text/plain');
my $t = APR::Table::make($r->pool, 8);
$t->add(A => 1);
$t->add(b => 2);
$t->add(a => 3);
$t->set(C => 4);
my @out;
push @out, 'get=' . $t->get('a') . ' list=' . join(',', $t->get('A'));
push @out, 'keys=' . join(',', keys %$t);
my @each;
while (my ($k, $v) = each %$t) { push @each, "$k=$v" }
push @out, "each=@each";
push @out, 'values=' . join(',', values %$t);
my $r2 = APR::Table::make($r->pool, 4);    # set replaces every value of the name, any case
$r2->add(X => 1);
$r2->add(y => 2);
$r2->add(x => 3);
$r2->set(x => 'only');
$r2->{Y} = 'stored';                       # The same through the hash
my @r2;
$r2->do(sub { push @r2, "$_[0]=$_[1]"; 1 });
push @out, "set=@r2";
$t->merge(a => 'x');
$t->merge(D => 'y');
push @out, 'merge=' . join('|', $t->get('a')) . ' D=' . $t->get('D');
my $o = APR::Table::make($r->pool, 2);
$o->add(a => 'O');
$o->add(Z => 'z');
my $n = $t->overlay($o, $r->pool);
my @n;
$n->do(sub { push @n, "$_[0]=$_[1]"; 1 });
push @out, "overlay=@n";
my $m = $n->copy($r->pool);
$m->compress(APR::Const::OVERLAP_TABLES_MERGE);
my @m;
$m->do(sub { push @m, "$_[0]=$_[1]"; 1 });
push @out, "compress_merge=@m";
my $s = $n->copy($r->pool);
$s->compress(APR::Const::OVERLAP_TABLES_SET);
my @s;
$s->do(sub { push @s, "$_[0]=$_[1]"; 1 });
push @out, "compress_set=@s";
my @f;
$t->do(sub { push @f, "$_[0]=$_[1]"; 1 }, 'b', 'C');
push @out, "do_filter=@f";
push @out,
      'exists='
    . (exists $t->{A} ? 1 : 0)
    . ' missing='
    . (defined $t->get('nope') ? 'def' : 'undef');
delete $t->{a};
push @out, 'after_delete=' . join(',', keys %$t);
$t->{Q} = 'q';
push @out, "ref=" . ref($t) . " q=$t->{q}";
$t->clear;
push @out, 'cleared=' . scalar(keys %$t);
$r->notes->set(note => 'kept');
$r->pnotes(perl => [1, 2]);
push @out, 'notes=' . $r->notes->get('note') . ' pnotes=' . scalar @{$r->pnotes('perl')};
$r->subprocess_env(MY_VAR => 'set');
push @out, 'subprocess_env=' . $r->subprocess_env('MY_VAR');
print map {"$_\n"} @out;
