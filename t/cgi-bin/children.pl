#!/usr/bin/perl
# Output from the script and from every kind of child process, interleaved
print "Content-Type: text/plain\n\n";
print "1 perl\n";
system 'echo 2 system';
print "3 perl\n";
my $pid = fork // die "fork: $!";
if (!$pid) { exec 'echo', '4 exec in a fork' }
waitpid $pid, 0;
open(my $cat, '|-', 'cat') or die "cat: $!";
print {$cat} "5 a pipe to cat\n";
close $cat;
print `echo 6 backticks`;
system 'echo 7 to stderr >&2';
print "8 perl\n";
system 'echo 9 system, last';
