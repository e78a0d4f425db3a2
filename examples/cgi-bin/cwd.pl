#!/usr/bin/perl
# Where does the script run? mod_cgi: its own directory. mod_perl 2's Registry: wherever Apache is.
use CGI;
use Cwd;

my $q = CGI->new;
print $q->header('text/plain');
print "Cwd: ", cwd(), "\n";
open(my $fh, '<', 'data.txt') or die "Can't open data.txt: $!\n";
print "data.txt: ", scalar <$fh>;
