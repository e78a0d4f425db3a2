package Perennial::Bench::Wrk;
use v5.36;
use Exporter               qw(import);
use Perennial::Bench::Load qw(run_load);

# The benchmarks' wrk: Perennial::Bench::Load's, with its failures as errors

our @EXPORT_OK = qw(run_wrk);

sub run_wrk (%a) {
    my $r = run_load(
        tool        => 'wrk',
        url         => "http://127.0.0.1:$a{port}" . ($a{path} // '/'),
        concurrency => $a{connections},
        seconds     => $a{duration},
        headers     => $a{headers},
    );
    return {%$r, errors => $r->{failed}};
}

1;
