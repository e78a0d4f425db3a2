package Perennial::Bench::Options;
use v5.36;
use Exporter     qw(import);
use Getopt::Long qw(GetOptionsFromArray);

# A bench script's command line: its options into %$opt (which holds the defaults), --help
# prints the usage and exits 0, an option it does not know exits 2

our @EXPORT_OK = qw(keepalive_modes options);

# A --keepalive list ('off,on'): 0 and 1 in its order
sub keepalive_modes ($list) {
    my %mode = (off => 0, on => 1);
    return map { $mode{$_} // die "--keepalive: '$_' is not off or on\n" } split /,/, $list;
}

sub options ($opt, $usage, @spec) {
    GetOptionsFromArray(\@ARGV, $opt, @spec, 'help') or exit 2;
    return unless $opt->{help};
    say $usage;
    exit 0;
}

1;
