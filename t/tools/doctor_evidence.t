use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             ();
use JSON::PP        ();
use Perennial::Test qw(perennial script_location start_server);

# perennial doctor's other two kinds of evidence: --run (each script run twice in a scratch
# interpreter, against fresh runs of its second request) and --log (a running server's error
# log). Each finding says which evidence found it; the clean scripts stay clean.

my $here    = Cwd::getcwd();
my $scripts = "$here/t/doctor/scripts";
my $report  = sub (@args) {
    my ($out, $code) = perennial('doctor', '--json', @args);
    my $json = eval { JSON::PP->new->decode($out) } or BAIL_OUT("not JSON: $out");
    return ($code, {map { ($_->{script} =~ m{([^/]+)\z})[0] => $_ } @{$json->{scripts}}});
};
my $by;
my $found = sub ($script, $kind, $name = undef) {
    my ($f)
        = grep { $_->{kind} eq $kind && (!defined $name || $_->{name} eq $name) }
        @{$by->{$script}{findings}};
    return $f;
};
my $evidence = sub ($script, $kind, $name = undef) {
    my $f = $found->($script, $kind, $name) or return 'none';
    return join ', ', @{$f->{evidence}};
};

# --run
(my $code, $by) = $report->(
    '--run', $scripts,
    map {"$here/examples/cgi-bin/$_"} qw(form.pl hello.pl cwd.pl counter.pl countlib.pl)
);
is $code, 1, '--run: some scripts are unsafe';
is_deeply [map { $by->{$_}{safe} ? 1 : 0 }
        qw(clean.pl handled.pl old_clean.pl form.pl hello.pl cwd.pl)],
    [1, 1, 1, 1, 1, 1], 'the clean scripts are still safe when run: no false alarm';
is_deeply [
    grep {
        grep { $_ eq 'dynamic' }
            @{$_->{evidence}}
        }
        map { @{$by->{$_}{findings}} } qw(clean.pl handled.pl form.pl hello.pl)
    ],
    [],
    'and running them found nothing';

is $evidence->('global.pl', 'global', '$user'), 'static, dynamic', 'a global: seen both ways';
like $found->('global.pl', 'global', '$user')->{seen},
    qr/after two requests it holds "first"; after the second alone, undef/,
    'with what it held after a posted form and a plain GET, against a fresh run';
like $found->('global.pl', 'output')->{seen},
    qr/it said "user: first" where a fresh interpreter says "user: nobody"/,
    'and what the second request was answered';
is $evidence->('closure.pl', 'closure', '$count'), 'static, dynamic', 'a closure';
is $evidence->('grows.pl',   'global',  '@seen'),  'static, dynamic', 'a global that grows';
is $evidence->('regex_o.pl', 'regex-o'), 'static, dynamic', 'a /o regex (the run\'s log)';
like $found->('regex_o.pl', 'output')->{seen}, qr/it said "no x" where .* says "found x"/,
    'which matched the first request\'s pattern';
is $evidence->('handle.pl', 'open-handle', 'COUNTER'), 'static, dynamic',
    'a global handle left open (the run\'s log)';
is $evidence->('uses_libs.pl', 'lib-state', '$visitors'), 'static, dynamic',
    'a library\'s file-level my';
is $evidence->('counter.pl', 'lib-state', '$counter'), 'static, dynamic',
    'the example that requires one, run in its own directory';
is $evidence->('hidden.pl', 'global', '$visits'), 'dynamic',
    'state the compiled code does not show (a string eval) is found by running it';
ok !$by->{'hidden.pl'}{safe}, 'which makes the script unsafe';

# --log: what a server's workers said about the scripts they ran
my $srv = start_server(workers => 1, conf => script_location('/registry', $scripts));
for my $script (qw(closure.pl handle.pl regex_o.pl)) {
    my $res = $srv->get("/registry/$script?word=w");
    is $res->{status}, 200, "the server ran $script";
}
$srv->stop;
my $log = "$srv->{dir}/error.log";
($code, $by) = $report->('--log', $log, $scripts);
is $evidence->('closure.pl', 'closure', '$count'), 'static, log',
    '--log: "will not stay shared" from the error log';
is $found->('closure.pl', 'closure', '$count')->{line}, 8,             'at its line';
is $evidence->('handle.pl', 'open-handle', 'COUNTER'),  'static, log', 'the handle left open';
is $evidence->('regex_o.pl', 'regex-o'),                'static, log', 'the /o regex';
is $evidence->('global.pl', 'global', '$user'),         'static', 'a script the server did not run';

my ($out, $status) = perennial('doctor', '--log', "$srv->{dir}/no-such.log", $scripts);
is $status, 2, 'an error log that is not there: exit status 2, as for usage';
like $out, qr/Can't read the error log ".*no-such\.log"/, 'says so';

done_testing;
