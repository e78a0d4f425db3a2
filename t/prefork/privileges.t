use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(configtest scratch_dir start_server wait_until write_file);

# Started as root, the manager keeps root for its sockets and files and every worker, script
# and CGI child runs as www-data (or the User given), as Debian's Apache does
plan skip_all => 'the manager must be started as root to give root up' if $> != 0;
my @www = getpwnam 'www-data' or plan skip_all => 'no www-data user on this system';

my $dir = scratch_dir();
write_file("$dir/id.pl", <<'PL', 0755);
#!/usr/bin/perl
warn "id.pl ran as $>\n";
print "Content-Type: text/plain\n\n", join(' ', $<, $>, (split ' ', $()[0], (split ' ', $))[0]), "\n";
PL
my $conf = <<"CONF";
ScriptAlias /cgi/ $dir/
Alias /reg $dir
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
CONF

sub uid_of ($pid) {
    open(my $fh, '<', "/proc/$pid/status") or return;
    local $/;
    return (<$fh> =~ /^Uid:\s+(\d+)/m)[0];
}

subtest 'without User: www-data, as Debian\'s Apache' => sub {
    my $srv = start_server(workers => 2, conf => $conf);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    my $ids = "$www[2] $www[2] $www[3] $www[3]\n";
    is $srv->get('/cgi/id.pl')->{content}, $ids,
        'a CGI child runs as www-data (uid, euid, gid, egid)';
    is $srv->get('/reg/id.pl')->{content}, $ids, 'so does a Registry script';
    is_deeply [map { uid_of($_) } $srv->pids], [$www[2], $www[2]], 'and every worker';
    is uid_of($srv->pid), 0, 'the manager keeps root';
    is_deeply [map { (stat "/proc/$_/smaps_rollup")[4] } $srv->pids], [0, 0],
        'the workers stay undumpable: their /proc files are root\'s, so no www-data process may trace them';
    like $srv->error_log,
        qr/\[info\] workers and scripts run as user www-data, group www-data \(no User given/,
        'the start says so';
    like $srv->error_log, qr/id\.pl ran as $www[2]/,
        'the scripts\' warnings still reach the error log';

    # A worker that gave up root cannot open root's logs again: it is replaced instead
    my @before = $srv->pids;
    my $d      = $srv->dir;
    rename "$d/access.log", "$d/access.log.1" or die;
    my ($out, $code) = $srv->cli('reopen-logs', '-c', $srv->conf);
    is $code, 0, 'reopen-logs' or diag $out;
    ok $srv->wait_replaced(\@before, 2), 'the workers were replaced';
    $srv->get('/cgi/id.pl') for 1 .. 3;
    ok wait_until(sub { 3 == (() = $srv->access_log =~ /id\.pl/g) }, 5, 'three lines'),
        'and their successors write the new access log'
        or diag $srv->access_log;
    $srv->stop;
};

subtest 'User and Group name who scripts run as; User root must be said' => sub {
    my @nobody  = getpwnam 'nobody' or return plan skip_all => 'no nobody user';
    my ($group) = getgrgid $www[3];
    my $srv     = start_server(workers => 1, conf => "User nobody\nGroup $group\n$conf");
    is $srv->get('/cgi/id.pl')->{content}, "$nobody[2] $nobody[2] $www[3] $www[3]\n",
        'User nobody, Group www-data';
    $srv->stop;
    $srv = start_server(workers => 1, conf => "User root\n$conf");
    is $srv->get('/reg/id.pl')->{content}, "0 0 0 0\n", 'User root: root';
    like $srv->error_log, qr/\[warn\] workers and scripts run as root \(User root\)/,
        'with a warning';
    $srv->stop;
    my ($text) = configtest("User no-such-user-here\nGroup no-such-group-here\n");
    like $text, qr/User no-such-user-here: no such user on this system/,
        'an unknown user stops the start';
    like $text, qr/Group no-such-group-here: no such group on this system/,
        'so does an unknown group';
};

done_testing;
