#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "lib dirs in \@INC: ", scalar(grep {m{/cgi-bin/lib\z}} @INC), "\n";
