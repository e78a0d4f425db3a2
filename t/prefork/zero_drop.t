use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Control;
use Perennial::Test qw(load_start load_stop start_server wait_until);

# Graceful restarts and hot upgrades while several clients send requests without a pause:
# every request is answered
my %CLIENTS = (clients => 4, path => '/sleep/0.005', seconds => 60);

subtest 'graceful restarts under load lose no request' => sub {
    my $srv   = start_server(app => 'pid.psgi', workers => 4);
    my @loads = (
        load_start($srv->port, %CLIENTS),
        load_start($srv->port, %CLIENTS, clients => 2, keep_alive => 1)
    );
    for my $n (1 .. 3) {
        select undef, undef, undef, 0.7;
        my ($out, $code) = $srv->cli('graceful', '-c', $srv->conf);
        is $code, 0, "graceful $n sent";
        ok wait_until(sub { $srv->error_log =~ /generation @{[$n + 1]} started/ },
            10, 'generation'),
            "generation @{[$n + 1]} started";
    }
    select undef, undef, undef, 0.7;
    for my $load (@loads) {
        my $sum = load_stop($load);
        cmp_ok $sum->{ok}, '>', 20, "requests answered during the restarts: $sum->{ok}";
        is $sum->{failed}, 0, 'none lost' or diag explain $sum->{why};
    }
    $srv->stop;
};

subtest 'a hot upgrade under load loses no request' => sub {
    my $srv   = start_server(app => 'pid.psgi', workers => 4);
    my $old   = $srv->pid;
    my @loads = (
        load_start($srv->port, %CLIENTS),
        load_start($srv->port, %CLIENTS, clients => 2, keep_alive => 1)
    );
    select undef, undef, undef, 0.7;
    my ($out, $code) = $srv->cli('upgrade', '-c', $srv->conf);
    is $code, 0, 'perennial upgrade finished' or diag $out;
    like $out, qr/manager $old replaced by manager (\d+)/, 'it says which manager took over';
    my ($new) = $out =~ /by manager (\d+)/;
    select undef, undef, undef, 0.7;

    for my $load (@loads) {
        my $sum = load_stop($load);
        cmp_ok $sum->{ok}, '>', 20, "requests answered during the upgrade: $sum->{ok}";
        is $sum->{failed}, 0, 'none lost' or diag explain $sum->{why};
    }
    ok !$srv->alive, 'the old manager is gone';
    is(Perennial::Control->read_pid($srv->pid_file), $new, 'the pid file names the new manager');
    my $log = $srv->error_log;
    like $log, qr/upgrade: new manager $new started/, 'old: started it';
    like $log, qr/\[pid $new\] .*upgrade: workers ready, asking manager $old to stop gracefully/,
        'new: took over';
    like $log, qr/\[pid $old\] .*manager $old stopped/, 'old: stopped';
    my ($status, $status_code) = $srv->cli('status', '-c', $srv->conf);
    is $status_code, 0, 'status reads the new scoreboard' or diag $status;

    # The new manager answers the usual commands through the pid file, and a broken
    # configuration makes an upgrade fail without harm
    open(my $fh, '>>', $srv->conf) or die;
    print {$fh} "NoSuchDirective 1\n";
    close $fh;
    ($out, $code) = $srv->cli('upgrade', '-c', $srv->conf, '--wait', 3);
    isnt $code, 0, 'perennial upgrade checks the configuration first';
    like $out, qr/perennial\.conf line \d+: unknown directive 'NoSuchDirective'/,
        'and names the line';
    kill 'USR2', $new;
    ok wait_until(
        sub {
            $srv->error_log
                =~ /upgrade failed: the new manager exited with status \d+; this manager keeps serving/;
        },
        10,
        'failed'
        ),
        'the running manager says so and serves on';
    is $srv->get('/')->{status}, 200, 'still serving';
    kill 'TERM', $new;
    ok wait_until(sub { !kill 0, $new }, 15, 'stopped'), 'the new manager stops on TERM';
};

done_testing;
