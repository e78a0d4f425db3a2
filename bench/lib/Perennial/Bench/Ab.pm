package Perennial::Bench::Ab;
use v5.36;
use Exporter               qw(import);
use Perennial::Bench::Load qw(run_load);

# The benchmarks' ab: Perennial::Bench::Load's, for at most a few seconds, with its failures
# as errors; keepalive: ab -k. And requests one after another, as the counting benches send
# them (run_in_turn).

our @EXPORT_OK = qw(run_ab run_in_turn);

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

# N requests one after another to port and path, within seconds: a new connection each (ab),
# or with keepalive all on one HTTP/1.1 connection (wrk's one client bounded in requests: ab
# -k's HTTP/1.0 keep-alive is not kept by every server, uWSGI's --http11-socket closes it)
sub run_in_turn (%a) {
    return run_load(
        tool        => $a{keepalive} ? 'wrk' : 'ab',
        url         => "http://127.0.0.1:$a{port}$a{path}",
        concurrency => 1,
        requests    => $a{requests},
        seconds     => $a{seconds},
        keepalive   => $a{keepalive},
    );
}

1;
