package Perennial::Bench::Wrk;
use v5.36;
use Exporter               qw(import);
use POSIX                  ();
use Time::HiRes            ();
use Perennial::Bench::Load qw(run_load);

# The benchmarks' wrk: Perennial::Bench::Load's, with its failures as errors. With `starved`,
# also how many of wrk's kept-alive connections a server left without a byte for a third of
# the run: wrk counts no error for a connection that never gets a response, and a prefork
# server with more clients than workers can serve a few of them and leave the rest waiting
# (the anchors' "keep-alive starvation"), which makes its requests/s look better than its
# service. Two looks with ss(8), a third and two thirds into the run: a connection that is
# there both times and had received nothing at the second was starved.

our @EXPORT_OK = qw(run_wrk);

sub run_wrk (%a) {
    my $looks = $a{starved} && _look_later($a{port}, $a{duration});
    my $r     = run_load(
        tool        => 'wrk',
        url         => "http://127.0.0.1:$a{port}" . ($a{path} // '/'),
        concurrency => $a{connections},
        seconds     => $a{duration},
        headers     => $a{headers},
    );
    my %r = (%$r, errors => $r->{failed});
    $r{starved} = _starved($looks) if $looks;
    return \%r;
}

# A child that looks at the connections to $port twice during the run, and writes what it saw
sub _look_later ($port, $duration) {
    pipe(my $read, my $write) or die "Can't make a pipe: $!\n";
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        close $read;
        for my $look (1, 2) {
            Time::HiRes::sleep($duration / 3);
            print {$write} map {"$look $_\n"} _connections($port);
        }
        close $write;
        POSIX::_exit(0);
    }
    close $write;
    return {pid => $pid, fh => $read};
}

# The client ends of the connections to $port: "local-port bytes-received" each
sub _connections ($port) {
    open(my $ss, '-|', 'ss', '-tinH', 'state', 'established', "( dport = :$port )")
        or return;
    my (@seen, $local);
    while (my $line = <$ss>) {
        if ($line =~ /^\S+\s+\S+\s+\S+:(\d+)\s+\S+:$port\b/) { $local = $1; next }
        next unless defined $local;
        my ($bytes) = $line =~ /bytes_received:(\d+)/;
        push @seen, "$local " . ($bytes // 0);
        undef $local;
    }
    close $ss;
    return @seen;
}

# Connections there at both looks with nothing received at the second
sub _starved ($looks) {
    my $fh = $looks->{fh};
    my (%first, $starved);
    while (my $line = <$fh>) {
        my ($look, $local, $bytes) = split ' ', $line;
        if ($look == 1) { $first{$local} = 1; next }
        $starved++ if $first{$local} && !$bytes;
    }
    close $fh;
    waitpid $looks->{pid}, 0;
    return $starved // 0;
}

1;
