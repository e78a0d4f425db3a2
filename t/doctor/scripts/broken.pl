#!/usr/bin/perl
# Does not compile
use strict;
print $undeclared;
