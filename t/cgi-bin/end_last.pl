#!/usr/bin/perl
# END blocks, last first, as perl runs them at exit: one that leaves by `last` (an error there)
# or calls exit ends only itself, and the others still run
$| = 1;
print "Content-Type: text/plain\n\n";
print "body\n";
END { print "first END\n" }
END { print "second END\n"; exit 3; print "never\n" }
END { print "third END\n";  last;   print "never\n" }
