package Perennial::Bench::Ab;
use v5.36;
use Exporter               qw(import);
use Perennial::Bench::Load qw(run_load);

# The benchmarks' ab: Perennial::Bench::Load's, for at most a few seconds, with its failures
# as errors; keepalive: ab -k

our @EXPORT_OK = qw(run_ab);

sub run_ab (%a) {
    my $r = run_load(
        tool        => 'ab',
        url         => "http://127.0.0.1:$a{port}$a{path}",
        concurrency => $a{concurrency} // 1,
        seconds     => $a{seconds}     // 5,
        requests    => $a{requests}    // 100_000,
        keepalive   => $a{keepalive},
    );
    return {%$r, errors => $r->{failed}};
}

1;
