package Fixture::Umask;
use strict;

# A library that tightens the umask for whoever calls it, and does not put it back
sub tighten { umask 077; return }

1;
