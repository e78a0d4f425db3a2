#!/usr/bin/perl
# Keeps a global file handle open, matches with /o, and changes the locale
use POSIX ();
open(KEPT, '<', $0) or die "Can't open myself: $!\n";
my $word = 'lint';
my $seen = $0 =~ /$word/o ? 'yes' : 'no';
my $was  = POSIX::setlocale(POSIX::LC_CTYPE());
POSIX::setlocale(POSIX::LC_CTYPE(), $was eq 'C' ? 'C.UTF-8' : 'C');
print "Content-Type: text/plain\n\nlocale=$was matched=$seen\n";
