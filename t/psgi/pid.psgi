use v5.36;

# Answers with the worker's pid, so tests can count workers and see recycling.
# /sleep/S holds the worker for S seconds first, signals or not.
use Time::HiRes ();

sub ($env) {
    if ($env->{PATH_INFO} =~ m{\A/sleep/([\d.]+)}) {
        my $end = Time::HiRes::time() + $1;
        while ((my $left = $end - Time::HiRes::time()) > 0) { Time::HiRes::sleep($left) }
    }
    return [200, ['Content-Type' => 'text/plain'], [$$]];
};
