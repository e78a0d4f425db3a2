#!/usr/bin/perl
# The examples' heavy script: a report that costs real CPU per request (a few milliseconds of
# arithmetic and string building) and some memory, as a page that renders data does
use strict;
use warnings;
use CGI;

my $q    = CGI->new;
my $rows = $q->param('rows') // 400;
$rows = 400 unless $rows =~ /\A\d{1,4}\z/;
my (@table, $sum);
for my $i (1 .. $rows) {
    my $x = 0;
    $x += sqrt($i * $_) for 1 .. 50;
    $sum += $x;
    push @table, sprintf '<tr><td>%d</td><td>%.3f</td><td>%s</td></tr>', $i, $x, 'x' x ($i % 40);
}
print $q->header(-type => 'text/html', -charset => 'utf-8');
print "<!doctype html><html><body><h1>Report</h1><p>Total: ", sprintf('%.1f', $sum), "</p>\n";
print "<table>\n", join("\n", @table), "\n</table></body></html>\n";
