package Perennial::Bench::PageWrites;
use v5.36;
use XSLoader;

# bench/pages.pl's probe in the server: loaded before the fork (PerlModule), it gives every
# worker the handlers of bench/xs/PageWrites.xs, which bench/pages.pl builds for the run and
# drives with signals. $PERENNIAL_PAGE_WRITES names the file a worker writes its notes to.

XSLoader::load(__PACKAGE__);
install($ENV{PERENNIAL_PAGE_WRITES} // die "PERENNIAL_PAGE_WRITES is not set\n");

1;
