use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use Perennial::Test qw(start_program start_status_server wait_until);

# A monitoring client nobody here wrote reads ?auto as it reads Apache's: Debian's
# prometheus-apache-exporter scrapes Perennial, and its metrics match what this test did
my $exporter = '/usr/bin/prometheus-apache-exporter';
plan skip_all => "$exporter is not installed (make test installs it)" unless -x $exporter;

my $srv = start_status_server(3);
$srv->get('/') for 1 .. 12;

# The exporter binds a port it is given
my ($pid, $port) = start_program(
    sub ($port) {
        (   $exporter,
            '--scrape_uri=http://127.0.0.1:' . $srv->port . '/server-status?auto',
            "--telemetry.address=127.0.0.1:$port"
        );
    },
    sub ($port) { HTTP::Tiny->new->get("http://127.0.0.1:$port/")->{status} < 500 },
    $srv->dir . '/exporter.log'
);
ok $pid, 'the exporter runs' or BAIL_OUT('no exporter');

# One worker asleep, so that the exporter's scrape finds two busy (it and the sleeper)
my $sleeper = fork // die;
if (!$sleeper) { $srv->get('/sleep/3'); POSIX::_exit(0) }
wait_until(sub { $srv->scoreboard =~ /W/ }, 10, 'one worker busy');
my $res = HTTP::Tiny->new->get("http://127.0.0.1:$port/metrics");
is $res->{status}, 200, 'metrics served';
my %m = map { /\A(apache_.+) (\S+)\z/ ? ($1 => $2) : () } split /\n/, $res->{content};
is $m{apache_up},                          1,  'apache_up: the exporter read the page';
is $m{apache_accesses_total},              12, 'apache_accesses_total: the twelve requests sent';
is $m{'apache_workers{state="busy"}'},     2,  'busy workers: the sleeper and the scrape';
is $m{'apache_workers{state="idle"}'},     1,  'idle workers';
is $m{'apache_scoreboard{state="reply"}'}, 2,  'scoreboard: two sending a reply';
is $m{'apache_scoreboard{state="idle"}'},  1,  'scoreboard: one waiting';
is $m{'apache_scoreboard{state="open_slot"}'}, 253, 'scoreboard: the open slots';
is $m{'apache_processes{state="all"}'},        3,   'processes';
like $m{apache_uptime_seconds_total}, qr/\A\d+\z/, 'uptime';
ok
    exists $m{'apache_info{mpm="prefork",version="Perennial/'
        . Perennial::Test::version()
        . ' (Perl '
        . $^V
        . ')"}'},
    'apache_info names Perennial and the MPM';
unlike slurp($srv->dir . '/exporter.log'), qr/level=error|panic/, 'no error in the exporter\'s log';
waitpid $sleeper, 0;
$srv->stop;

sub slurp ($file) { open(my $fh, '<', $file) or return ''; local $/; <$fh> }

done_testing;
