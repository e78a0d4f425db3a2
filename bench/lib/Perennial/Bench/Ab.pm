package Perennial::Bench::Ab;
use v5.36;
use Exporter qw(import);

# Runs ab (HTTP/1.0, one connection per request) for at most a few seconds and reads its rate

our @EXPORT_OK = qw(run_ab);

sub run_ab (%a) {
    my @cmd = (
        'ab', '-q', '-c', $a{concurrency} // 1,
        '-t', $a{seconds} // 5,
        '-n',
        $a{requests} // 100_000,
        "http://127.0.0.1:$a{port}$a{path}"
    );
    open(my $fh, '-|', @cmd) or die "Can't run ab: $!\n";
    my $out = do { local $/; <$fh> };
    close $fh;
    my ($rps)    = $out =~ /Requests per second:\s+([\d.]+)/;
    my ($failed) = $out =~ /Failed requests:\s+(\d+)/;
    my ($non2xx) = $out =~ /Non-2xx responses:\s+(\d+)/;
    return {rps => $rps // 0, errors => ($failed // 0) + ($non2xx // 0), raw => $out};
}

1;
