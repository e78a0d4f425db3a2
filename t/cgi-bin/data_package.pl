#!/usr/bin/perl
# DATA belongs to the package in force at __DATA__, here Blog's (Blosxom reads its templates so)
package Blog;
print "Content-Type: text/plain\n\n";
my @lines = <DATA>;
print "Blog::DATA: ", scalar(@lines), " lines, first: $lines[0]";
__DATA__
template line
another
