use v5.36;
use lib 't/lib';
use Test::More;
use Cwd ();
use HTTP::Tiny;
use IO::Socket::IP;
use Perennial::Test qw(scratch_dir wait_until);

# plackup -s Perennial, with plackup's own flags
my $plackup = (grep {-x} map {"$_/plackup"} split /:/, $ENV{PATH})[0];
plan skip_all => 'plackup is not installed (libplack-perl)' unless $plackup;
my $dir = scratch_dir();

# pid.psgi, and /env: what the application sees of the environment plackup was started with
my $app = "$dir/app.psgi";
open(my $fh, '>', $app) or die $!;
print {$fh} 'use Plack::Util; my $pid = Plack::Util::load_psgi("'
    . Cwd::abs_path('t/psgi/pid.psgi')
    . '"); sub { $_[0]{PATH_INFO} eq "/env" ? [200, [], [$ENV{PLACKUP_TEST_VAR} // "none"]] : $pid->(@_) }';
close $fh;
my $port = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)->sockport;
my $pid  = fork // die;
if (!$pid) {
    setpgrp(0, 0);
    open STDERR, '>', "$dir/err" or die;
    $ENV{PLACKUP_TEST_VAR} = 'kept';
    exec $^X, '-Ilib', $plackup, '-s', 'Perennial', '--host', '127.0.0.1', '--port', $port,
        '--workers', 2,
        '--max-requests', 100, '-E', 'development', $app;
}
my $res;
ok wait_until(sub { $res = HTTP::Tiny->new->get("http://127.0.0.1:$port/"); $res->{status} == 200 },
    10, 'up'),
    'plackup serves through Perennial';
like $res->{content}, qr/\A\d+\z/, 'the application answered';
my %pids
    = map { HTTP::Tiny->new->get("http://127.0.0.1:$port/sleep/0.01")->{content} => 1 } 1 .. 10;
cmp_ok scalar(keys %pids), '<=', 2, 'at most two workers';
is HTTP::Tiny->new->get("http://127.0.0.1:$port/env")->{content}, 'kept',
    'the application sees the environment plackup was started with, as under Starman';
kill 'TERM', $pid;
waitpid $pid, 0;
like do { open my $e, '<', "$dir/err"; local $/; <$e> }, qr/manager \d+ started/,
    'the manager logged its start';
END { kill 'KILL', -$pid if $pid }
done_testing;
