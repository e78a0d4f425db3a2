#!/usr/bin/perl
# Never ends: a RequestDeadline must cut it
print "Content-Type: text/plain\n\n";
my $n = 0;
spin();

sub spin {
    while (1) { $n++ }
}
