#!/usr/bin/perl
# After an internal redirect (to a script, which runs inside this one), exit still ends only the
# request, and dying only adds a log line: one response, the other script's
my $r    = shift;
my $what = $r->args // '';
$r->internal_redirect($r->uri =~ s{[^/]+\z}{count.pl}r);
exit 0                          if $what eq 'exit';
die "died after the redirect\n" if $what eq 'die';
