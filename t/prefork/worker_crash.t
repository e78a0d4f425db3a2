use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(start_server wait_until);

# A worker that is killed or dies is replaced, and the event is logged with the reason
my $srv = start_server(app => 'pid.psgi', workers => 2);
ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
my ($victim) = map { $_->{pid} } $srv->slots;
kill 'KILL', $victim;
ok wait_until(sub { $srv->error_log =~ /worker $victim exited \(signal 9, \d+ requests\)/ },
    10, 'logged'),
    'the kill is logged with the signal';
ok wait_until(
    sub {
        $srv->idle == 2 && !grep { $_->{pid} == $victim } $srv->slots;
    },
    10,
    'replaced'
    ),
    'a new worker took its place: ' . $srv->scoreboard;
is $srv->get('/')->{status}, 200, 'serving';
$srv->stop;
done_testing;
