#!/usr/bin/perl
# Loads a module whose END block must wait for the process's exit, not the request's end
use FindBin ();
use lib "$FindBin::Bin/lib";
use Fixture::Ledger;
print "Content-Type: text/plain\n\n", Fixture::Ledger::entry();
