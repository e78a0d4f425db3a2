#!/usr/bin/perl
# Reads its STDIN, then (with ?reopen) opens STDIN again on its own file, as a script that
# reads a file through STDIN might (?string: on a string of its own; ?close closes it)
my $n = read(STDIN, my $buf, 100);
print "Content-Type: text/plain\n\n", (defined $n ? "read $n [$buf]" : 'read failed'), "\n";
open(STDIN, '<', __FILE__) or die "reopen: $!"    if ($ENV{QUERY_STRING} // '') eq 'reopen';
close STDIN                                       if ($ENV{QUERY_STRING} // '') eq 'close';
open(STDIN, '<', \"secret=1") or die "reopen: $!" if ($ENV{QUERY_STRING} // '') eq 'string';
