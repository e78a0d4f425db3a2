use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(start_server wait_until);

# A worker exits after MaxRequestsPerChild requests and is replaced at once
my $srv = start_server(app => 'pid.psgi', workers => 1, conf => <<'CONF');
MaxRequestsPerChild 5
MaxRequestsJitter 0
CONF

my @pids = map { $srv->get('/')->{content} } 1 .. 15;
is scalar(grep {/\A\d+\z/} @pids), 15, 'every request answered';
my @runs;
for my $pid (@pids) {
    if   (@runs && $runs[-1][0] eq $pid) { $runs[-1][1]++ }
    else                                 { push @runs, [$pid, 1] }
}
is_deeply [map { $_->[1] } @runs], [5, 5, 5], 'three workers, five requests each';
like $srv->error_log, qr/reached MaxRequestsPerChild \(5 requests\)/, 'the recycling is logged';
like $srv->error_log, qr/worker $runs[0][0] exited \(status 0, 5 requests\)/, 'with the count';
$srv->stop;

subtest 'jitter spreads the limits below MaxRequestsPerChild' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "MaxRequestsPerChild 10\nMaxRequestsJitter 50%\n"
    );
    my @pids = map { $srv->get('/')->{content} } 1 .. 40;
    my %count;
    $count{$_}++ for @pids;
    my @full = grep { $_ ne $pids[-1] } keys %count;
    ok @full >= 3,                                          'several workers used';
    ok !(grep { $count{$_} > 10 || $count{$_} < 5 } @full), 'each served between 5 and 10';
    $srv->stop;
};

subtest 'psgix.harakiri.commit recycles the worker after the response' => sub {
    my $srv    = start_server(app => 'harakiri.psgi', workers => 1);
    my $first  = $srv->get('/')->{content};
    my $second = $srv->get('/')->{content};
    isnt $second, $first, 'a new worker answered the next request';
    $srv->stop;
};
done_testing;
