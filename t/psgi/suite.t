use v5.36;
use Test::More;
use File::Temp qw(tempdir);
use Plack::Test::Suite;

# Plack's own conformance suite, against a real Perennial with two workers on loopback
my $dir = tempdir(CLEANUP => 1);
Plack::Test::Suite->run_server_tests(
    'Perennial', undef, undef,
    workers   => 2,
    error_log => "$dir/error.log"
);

open(my $fh, '<', "$dir/error.log") or die "Can't read the error log: $!";
my $log = do { local $/; <$fh> };
like $log, qr/app died: Throwing an exception from app handler/,
    'the dying app was logged, not fatal';
done_testing;
