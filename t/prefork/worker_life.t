use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use File::Temp      ();
use Perennial::Test qw(start_server wait_until);

# Preloading in the manager, fork safety and hooks, recycling by age and by the pool's memory,
# and reopening the logs
my $dir = abs_path('t/life');

sub registry_conf ($extra = '') {
    return <<"CONF";
Alias /life $dir
<Location /life>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
$extra
CONF
}

subtest 'PerlPreloadScripts compiles in the manager; workers reseed rand; child hooks run' => sub {
    my $hooks = File::Temp->new;
    chmod 0666, "$hooks" or die $!;    # The workers write it, as www-data when started as root
    local $ENV{LIFE_HOOKS_FILE} = "$hooks";    # Passed on to the hooks by PerlPassEnv
    my $srv = start_server(
        workers => 2,
        args    => ['-I', "$dir/lib"],
        conf    => registry_conf(<<"CONF"));
PerlPreloadScripts $dir
PerlPassEnv LIFE_HOOKS_FILE
PerlChildInitHandler Life::Hooks
PerlChildExitHandler Life::Hooks::bye
CONF
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    like $srv->error_log,
        qr/PerlPreloadScripts \Q$dir\E: 8 scripts compiled for ModPerl::Registry/,
        'the manager compiled the directory: its eight scripts, not the library one requires';
    unlike $srv->error_log, qr/helper\.pl/, 'which it would have logged as a script';
    is $srv->get('/life/helped.pl')->{content}, "helped\n", 'the script that requires it runs';
    my ($compiled_in, $ran_in) = split ' ', $srv->get('/life/compiled.pl')->{content};
    is $compiled_in, $srv->pid, 'the script was compiled in the manager';
    isnt $ran_in,    $srv->pid, 'and runs in a worker';

    # Two kept-alive connections: each is held by its own worker
    my @agents = map { HTTP::Tiny->new(keep_alive => 1, timeout => 10) } 1 .. 2;
    my (%numbers, %workers);
    for (1 .. 20) {
        for my $ua (@agents) {
            my ($n, $pid) = split ' ',
                $ua->get('http://127.0.0.1:' . $srv->port . '/life/random.pl')->{content};
            $numbers{$pid}{$n}++;
            $workers{$pid}++;
        }
    }
    undef @agents;
    my @pids = keys %workers;
    is scalar(@pids), 2, 'both workers answered';
    my ($first) = sort { $a <=> $b } keys %{$numbers{$pids[0]}};
    ok !exists $numbers{$pids[1]}{$first}, 'the workers do not share a random sequence';

    my @init = _lines("$hooks", qr/^init (\d+) (\d+) /);
    is_deeply [sort @init], [sort @pids], 'PerlChildInitHandler ran in each worker, with its pid';
    is_deeply [_lines("$hooks", qr/^init \d+ \d+ (\S+)$/)], [('mod_perl/2.0.12') x 2],
        'its module loaded with MOD_PERL set, as mod_perl loads code';

    $srv->stop;

    # The manager may be gone a moment before its workers have run their exit hooks
    wait_until(sub { _lines("$hooks", qr/^exit (\d+)$/) >= 2 }, 5, 'exit hooks');
    my @exit = _lines("$hooks", qr/^exit (\d+)$/);
    is_deeply [sort @exit], [sort @pids], "PerlChildExitHandler ran as each worker ended"
        or diag `cat $hooks`, $srv->error_log;
};

# A graceful restart compiles the scripts again in the same manager: afresh, not over the
# packages of the generation before (each sub would be "redefined", with a warning)
subtest 'a graceful restart compiles preloaded scripts afresh' => sub {
    my $scripts = File::Temp->newdir;
    _write("$scripts/warned.pl",
              "use strict;\nuse warnings;\nsub helper { 1 }\n"
            . "print \"Content-Type: text/plain\\n\\n\", helper(), \"\\n\";\n");
    chmod 0755, "$scripts/warned.pl", "$scripts";
    my $srv = start_server(
        workers => 1,
        conf    => "Alias /w $scripts\n<Location /w>\n    SetHandler perl-script\n"
            . "    PerlResponseHandler ModPerl::Registry\n    Options +ExecCGI\n</Location>\n"
            . "PerlPreloadScripts $scripts\n"
    );
    is $srv->get('/w/warned.pl')->{content}, "1\n", 'a script with warnings on';
    $srv->signal('USR1');
    ok wait_until(sub { (() = $srv->error_log =~ /PerlPreloadScripts .*compiled/g) >= 2 },
        10, 'compiled again'),
        'the scripts are compiled again';
    unlike $srv->error_log, qr/redefined/, 'without a "redefined" warning';
    $srv->stop;
};

subtest 'a graceful restart runs PerlRequire again and reloads changed modules' => sub {
    my $lib = File::Temp->newdir;
    chmod 0755, "$lib" or die $!;
    mkdir "$lib/Life" or die;
    _write("$lib/Life/Version.pm", "package Life::Version; sub version { 1 } 1;\n");
    _write("$lib/inits",           '');
    chmod 0666, "$lib/inits" or die $!;    # The workers write it, as www-data when run as root
    _write("$lib/startup.pl", <<"PL");
open(my \$fh, '>>', '$lib/ran') or die; print {\$fh} "ran\\n";
use Apache2::ServerUtil ();
Apache2::ServerUtil->server->push_handlers(PerlChildInitHandler => sub {
    open(my \$fh, '>>', '$lib/inits') or die; print {\$fh} "\$\$\\n"; return 0;
});
1;
PL
    my $srv = start_server(
        workers => 1,
        args    => ['-I', "$lib"],
        conf    => "PerlRequire $lib/startup.pl\nPerlModule Life::Version\n"
            . "<Location />\nSetHandler psgi\nPSGIApp $dir/version.psgi\n</Location>\n"
    );
    is $srv->get('/')->{content}, '1', 'the module as loaded at start';
    _write("$lib/Life/Version.pm", "package Life::Version; sub version { 2 } 1;\n");
    utime time + 5, time + 5, "$lib/Life/Version.pm";
    $srv->signal('USR1');
    ok wait_until(sub { $srv->get('/')->{content} eq '2' }, 10, 'new code'),
        'after a graceful restart the workers run the changed module';
    like $srv->error_log, qr{Life/Version\.pm changed: loaded again for the new generation},
        'the log says which file was loaded again';
    is scalar(() = _slurp("$lib/ran") =~ /ran/g), 2, 'startup.pl ran again';
    my %inits;
    $inits{$_}++ for split /\n/, _slurp("$lib/inits");
    is_deeply [grep { $_ > 1 } values %inits], [],
        'each worker ran the pushed PerlChildInitHandler once: the restart forgot the old one';
    ok scalar(keys %inits) >= 2, 'in the workers of both generations';
    $srv->stop;
};

subtest 'MaxLifetime retires workers and replaces them' => sub {
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 2,
        conf    => "MaxLifetime 2\nMaxLifetimeJitter 0\n"
    );
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    my @first = $srv->pids;
    ok wait_until(
        sub {
            $srv->error_log =~ /worker \d+ retires after its request: reached MaxLifetime \(2 s\)/;
        },
        10,
        'lifetime'
        ),
        'a worker past its lifetime retires, and the log says why';
    ok $srv->wait_replaced(\@first, 2), 'both were replaced: ' . $srv->scoreboard;
    is $srv->get('/')->{status}, 200, 'serving';
    $srv->stop;
};

subtest 'PoolPrivateLimit retires the largest idle worker first' => sub {

    # Not parked between requests: the connection stays with the worker that took it
    my $srv = start_server(
        app     => 'leak.psgi',
        workers => 3,
        conf    => "PoolPrivateLimit 40M\nParkKeepAlive Off\n"
    );
    ok wait_until(sub { $srv->idle == 3 }, 10, 'three idle'), 'three workers';

    # One kept-alive connection: one worker takes the twelve requests and grows by 4 MB each,
    # until the ceiling retires it after one of them (the manager looks once a second, so that
    # may come before the twelfth, and the rest go to another worker)
    my $ua = HTTP::Tiny->new(keep_alive => 1, timeout => 10);
    my %grown;
    $grown{$ua->get('http://127.0.0.1:' . $srv->port . '/')->{content}}++ for 1 .. 12;
    undef $ua;
    my ($big) = sort { $grown{$b} <=> $grown{$a} } keys %grown;
    ok $grown{$big} > 6, "one worker took most of them ($grown{$big})";
    ok wait_until(
        sub {
            $srv->error_log
                =~ /worker (\d+) retires after its request: pool private memory \d+ KB over PoolPrivateLimit 40960 KB; idle worker with \d+ KB private/;
        },
        20,
        'ceiling'
        ),
        'the ceiling retires a worker and says why';
    my ($retired) = $srv->error_log =~ /worker (\d+) retires after its request: pool private/;
    is $retired, $big, "the one with the most private memory went first ($grown{$big} requests)";
    ok $srv->wait_replaced([$big], 3), 'and was replaced';
    $srv->stop;
};

subtest 'reopen-logs: the manager and the workers write to new files' => sub {

    # Workers that keep the manager's user reopen the logs themselves (t/prefork/privileges.t:
    # those that gave up root are replaced instead)
    my $srv = start_server(app => 'pid.psgi', workers => 2, args => ['--user', (getpwuid $>)[0]]);
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    $srv->get('/') for 1 .. 4;
    my @before = sort map { $_->{pid} } $srv->slots;
    my $d      = $srv->dir;
    rename "$d/access.log", "$d/access.log.1" or die;
    rename "$d/error.log",  "$d/error.log.1"  or die;
    my ($out, $code) = $srv->cli('reopen-logs', '-c', $srv->conf);
    is $code, 0, 'reopen-logs sent' or diag $out;
    ok wait_until(sub { -s "$d/error.log" && $srv->error_log =~ /logs reopened/ }, 10, 'reopened'),
        'the manager writes the new error log';
    $srv->get('/') for 1 .. 10;

    # (A request's line is written just after its response: the last may come a moment later)
    wait_until(sub { (() = $srv->access_log =~ /" 200 /g) >= 10 }, 10, 'ten lines');
    my $access = $srv->access_log;
    is scalar(() = $access =~ /" 200 /g), 10, 'every later request is in the new access log';
    is_deeply [sort map { $_->{pid} } $srv->slots], \@before, 'by the same workers: no restart';
    $srv->stop;
};

subtest 'reopen-logs when their directory is gone: the server goes on with the old files' => sub {
    my $logs = Perennial::Test::scratch_dir() . '/logs';
    mkdir $logs or die "$logs: $!";
    chmod 0777, $logs;
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 2,
        args    => ['--user', (getpwuid $>)[0]],
        conf    => "ErrorLog $logs/error.log\nCustomLog $logs/access.log common\n"
    );
    ok wait_until(sub { $srv->idle == 2 }, 10, 'two idle'), 'two workers';
    rename $logs, "$logs.gone" or die "$logs: $!";
    my ($out, $code) = $srv->cli('reopen-logs', '-c', $srv->conf);
    is $code, 0, 'reopen-logs sent' or diag $out;
    ok wait_until(
        sub {
            _slurp("$logs.gone/error.log")
                =~ /logs not reopened, still writing to the old ones: Can't open log/;
        },
        10,
        'the reason'
        ),
        'the manager says why, in the log it still writes';
    ok $srv->alive, 'and goes on';
    is $srv->get('/')->{status}, 200, 'serving';
    ($out, $code) = $srv->cli('stop', '-c', $srv->conf);
    is $code, 0, 'stop still finds it' or diag $out;
};

sub _write ($file, $text) {
    open(my $fh, '>', $file) or die "Can't write $file: $!";
    print {$fh} $text;
    close $fh;
}

sub _slurp ($file) {
    open(my $fh, '<', $file) or return '';
    local $/;
    return scalar <$fh>;
}

sub _lines ($file, $re) {
    open(my $fh, '<', $file) or return;
    return map { $_ =~ $re ? $1 : () } <$fh>;
}

done_testing;
