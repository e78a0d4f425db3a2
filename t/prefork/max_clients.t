use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(start_server wait_until);

# More concurrent clients than MaxClients: the rest wait in the listen queue, none is lost
my $srv = start_server(app => 'pid.psgi', conf => <<'CONF');
StartServers 3
MinSpareServers 1
MaxSpareServers 2
MaxClients 3
CONF

my @socks = map {
    my $s = $srv->connect;
    $s->syswrite("GET /sleep/1.5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    $s;
} 1 .. 7;

my $most = 0;
ok wait_until(
    sub {
        my $n = $srv->workers;
        $most = $n if $n > $most;
        $srv->error_log
            =~ /server reached MaxClients setting, consider raising the MaxClients setting/;
    },
    10,
    'MaxClients log line'
    ),
    'the error log says MaxClients was reached';

my %pids;
for my $s (@socks) {
    local $/;
    my $out = <$s> // '';
    like $out, qr{\AHTTP/1\.1 200 OK}, 'queued client answered';
    $pids{$1}++ if $out =~ /\r\n\r\n(\d+)\z/;
}
cmp_ok $most,              '<=', 3, "at most MaxClients workers ($most)";
cmp_ok scalar(keys %pids), '<=', 3, 'answered by at most three workers';
my @lines = $srv->error_log =~ /(server reached MaxClients)/g;
is scalar @lines, 1, 'logged once for the episode';
$srv->stop;
done_testing;
