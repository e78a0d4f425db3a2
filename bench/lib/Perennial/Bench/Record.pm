package Perennial::Bench::Record;
use v5.36;
use Exporter         qw(import);
use Cpanel::JSON::XS ();

# A bench script's figures, kept for bench/goals.pl: one JSON line per script run, appended to
# the file named by its --record option, so that `make bench` ends with one table of issue
# 16's goals measured by the scripts before it

our @EXPORT_OK = qw(read_records record);

sub record ($file, $bench, $figures) {
    return unless defined $file;
    my $line = Cpanel::JSON::XS->new->canonical->encode(
        {bench => $bench, at => scalar gmtime, figures => $figures});
    open(my $fh, '>>', $file) or die "Can't append to $file: $!\n";
    print {$fh} "$line\n";
    close $fh or die "Can't write $file: $!\n";
    return;
}

# bench name => its last run's figures
sub read_records ($file) {
    open(my $fh, '<', $file) or die "Can't read $file: $!\n";
    my %last;
    while (my $line = <$fh>) {
        next unless $line =~ /\S/;
        my $r = Cpanel::JSON::XS->new->decode($line);
        $last{$r->{bench}} = $r;
    }
    return \%last;
}

1;
