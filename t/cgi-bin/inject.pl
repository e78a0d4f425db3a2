#!/usr/bin/perl
print "Content-Type: text/plain\nX-Bad: one\rInjected: yes\n\nbody\n";
