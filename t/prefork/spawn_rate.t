use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(start_server wait_until);

# Short of MinSpareServers, the manager forks 1, 2, 4, 8 ... a second, as Apache does
my $srv = start_server(app => 'pid.psgi', conf => <<'CONF');
LogLevel debug
StartServers 1
MinSpareServers 20
MaxSpareServers 40
MaxClients 24
CONF
ok wait_until(sub { $srv->workers == 24 }, 15, '24 workers'), 'grew to MaxClients';
my @bursts = $srv->error_log =~ /spawning (\d+) workers/g;
is_deeply \@bursts, [1, 2, 4, 8, 8], 'bursts double, the last one capped by MaxClients';
like $srv->error_log,   qr/server seems busy/, 'the busy warning comes with the bigger bursts';
unlike $srv->error_log, qr/server reached MaxClients/, 'not "reached MaxClients": workers are idle';
$srv->stop;
done_testing;
