#!/usr/bin/perl
# Old-style code that is safe resident, though it looks like the pitfalls: globals reset on
# every request before they are added to, a foreach over a global, a /o on a constant pattern,
# a global handle closed (and its lock let go) in the same request, file-level my variables
# that only ever hold constants, ||= on a lexical
use CGI;
use Fcntl qw(:flock);
use vars  qw(@items $out $key %in);
my $q = CGI->new;
@items = ();
$out   = '';
push @items, $q->param('item') if defined $q->param('item');
$out .= "item: $_\n" for @items;
%in = (a => 1, b => 2);
foreach $key (sort keys %in) { $out .= "$key\n" }
my $id = $q->param('id') // 1;
$out .= "numeric\n" if $id =~ /^\d+$/o;
open(LOCK, '<', '/dev/null') or die "Can't open: $!";
flock(LOCK, LOCK_SH);
close(LOCK);
opendir(DIR, '.') or die "Can't read .: $!";
closedir(DIR);
my @DAYS = qw(Sun Mon Tue);
my $SITE = 'My Site';
sub day_name { return "$SITE: $DAYS[$_[0]]" }
my $title;
$title ||= day_name(1);
print $q->header('text/plain'), $out, $title, "\n";
