#!/usr/bin/perl
# A forked copy of the script prints, then exits or runs off the end of the script
$| = 1;
print "Content-Type: text/plain\n\n";
my $parent = $$;
print "parent\n";
for my $how (qw(exit end)) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        print "child that will $how\n";
        exit 3 if $how eq 'exit';
        last;
    }
    waitpid $pid, 0;
    print "child status ", $? >> 8, "\n";
}
print "done in the ", ($$ == $parent ? "parent" : "child"), "\n";
