use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(start_server wait_until);

# A manager killed with -9 leaves no workers behind: each learns of it (PR_SET_PDEATHSIG),
# finishes what it is doing and exits, so the port is free again; `perennial status` says the
# manager is gone instead of showing its last scoreboard as a running server
my $srv = start_server(app => 'pid.psgi', workers => 2);
ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
my @workers = map { $_->{pid} } $srv->slots;
is $srv->get('/')->{status}, 200, 'serving';
kill 'KILL', $srv->pid;
ok wait_until(
    sub {
        !grep { kill 0, $_ } @workers;
    },
    10,
    'the workers gone'
    ),
    'the workers exit when their manager is killed';
my ($out, $code) = $srv->cli('status', '--pid', $srv->pid_file);
is $code, 1, 'status fails';
like $out, qr/the manager \(pid \d+\) is gone/, 'and says the manager is gone';
done_testing;
