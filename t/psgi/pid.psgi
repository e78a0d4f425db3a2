use v5.36;

# Answers with the worker's pid, so tests can count workers and see recycling.
# /sleep/S holds the worker for S seconds first.
sub ($env) {
    select undef, undef, undef, $1 if $env->{PATH_INFO} =~ m{\A/sleep/([\d.]+)};
    return [200, ['Content-Type' => 'text/plain'], [$$]];
};
