#!/usr/bin/perl
# Leaves the process, not the request: CORE::exit and POSIX::_exit end the worker
use strict;
use POSIX ();
print "Content-Type: text/plain\n\nleaving\n";
CORE::exit(0) if $ENV{QUERY_STRING} eq 'core';
POSIX::_exit(0);
