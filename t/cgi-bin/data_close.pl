#!/usr/bin/perl
# Reads one line of DATA, seeks, then closes it: each request starts from the first line again
print "Content-Type: text/plain\n\n";
my $first = <DATA>;
seek DATA, 0, 2;
my $rest = <DATA>;
close DATA;
print "first: $first", 'after the end: ', defined $rest ? 'more' : 'nothing', "\n";
__DATA__
line one
line two
