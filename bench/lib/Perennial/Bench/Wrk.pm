package Perennial::Bench::Wrk;
use v5.36;
use Exporter qw(import);

# Runs wrk against a loopback port and reads its report

our @EXPORT_OK = qw(run_wrk);

sub run_wrk (%a) {
    my $threads = $a{connections} < 2 ? 1 : 2;
    my @cmd     = (
        'wrk', "-t$threads", "-c$a{connections}", "-d$a{duration}s", '--latency',
        (map { ('-H', $_) } @{$a{headers} // []}),
        "http://127.0.0.1:$a{port}" . ($a{path} // "/")
    );
    open(my $fh, '-|', @cmd) or die "Can't run wrk: $!\n";
    my $out = do { local $/; <$fh> };
    close $fh;
    my %r = (raw => $out, errors => 0);
    ($r{rps}) = $out =~ /Requests\/sec:\s+([\d.]+)/;
    $r{avg_ms} = _ms($out =~ /Latency\s+([\d.]+\w+)/);
    $r{p99_ms} = _ms($out =~ /\s99%\s+([\d.]+\w+)/);
    $r{errors} += $_ for $out =~ /(?:connect|read|write|timeout) (\d+)/g;
    $r{errors} += $1 if $out  =~ /Non-2xx or 3xx responses: (\d+)/;
    $r{rps} //= 0;
    return \%r;
}

sub _ms ($text) {
    return 0 unless defined $text;
    my ($n, $unit) = $text =~ /([\d.]+)(\w+)/;
    return $n * ({us => 0.001, ms => 1, s => 1000, m => 60_000}->{$unit} // 1);
}

1;
