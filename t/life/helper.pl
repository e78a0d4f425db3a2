# A library the scripts beside it require by path: PerlPreloadScripts does not compile it as a
# script of its own
my $calls = 0;
sub helper_says { ++$calls; return "helped" }
1;
