use v5.36;
use Test::More;
use Plack::Test::Suite;

# Plack's own conformance suite, against a real Perennial on loopback
Plack::Test::Suite->run_server_tests('Perennial', undef, undef, workers => 2, log_level => 'error');
done_testing;
