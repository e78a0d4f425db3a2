use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use IO::Socket::IP;
use Perennial::Control;
use Perennial::Test qw(scratch_dir wait_until);

# -D: the command returns, the manager lives on in the background, stop finds it
my $dir  = scratch_dir();
my $port = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)->sockport;
my @cmd  = (
    $^X,               '-Ilib',        'bin/perennial',   'serve',
    '-D',              '--pid',        "$dir/p.pid",      '--error-log',
    "$dir/error.log",  '--access-log', "$dir/access.log", '-l',
    "127.0.0.1:$port", '--workers',    2,                 't/psgi/pid.psgi'
);

my $out = qx{@cmd 2>&1};
is $?, 0, 'the command returned at once' or diag $out;
ok wait_until(sub { -s "$dir/p.pid" }, 10, 'pid file'), 'pid file written';
my $pid = Perennial::Control->read_pid("$dir/p.pid");
END { kill 'KILL', $pid if $pid }
ok kill(0, $pid), "manager $pid is running";
ok wait_until(sub { HTTP::Tiny->new->get("http://127.0.0.1:$port/")->{status} == 200 },
    10, 'serving'),
    'serving';
ok wait_until(
    sub {
        (   do { open my $fh, '<', "$dir/access.log"; local $/; <$fh> }
                // ''
        ) =~ /"GET \/ HTTP\/1\.1" 200/;
    },
    5,
    'access log'
    ),
    'access log written';

$out = qx{$^X -Ilib bin/perennial stop --pid $dir/p.pid 2>&1};
like $out, qr/manager $pid stopped/, 'stop waited for it';
ok !-e "$dir/p.pid", 'pid file removed';
like do { open my $fh, '<', "$dir/error.log"; local $/; <$fh> }, qr/manager $pid stopped/,
    'error log written';

$out = qx{$^X -Ilib bin/perennial serve -D -l 127.0.0.1:$port t/psgi/pid.psgi 2>&1};
isnt $?, 0, '-D without an error log is refused';
like $out, qr/--daemonize needs an error log/, 'and says what to add';
done_testing;
