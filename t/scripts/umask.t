use v5.36;
use Test::More;
use Cwd qw(abs_path);
use Perennial::Config;
use Perennial::Executor;
use Perennial::Log;
use lib 't/lib';
use Perennial::Test qw(in_process_get);

# The umask is put back after a script request in which a umask ran, and only then: the
# executor's own putting back must not count as one, or every request after the first would
# pay a system call for it. (t/scripts/modes.t sees a script's umask put back from outside.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Umask::xs_ran;

umask 022;
my $log = Perennial::Log->new(config => Perennial::Config->new(log_level => 'error'));
my $app = Perennial::Executor->new(
    root   => abs_path('t/cgi-bin'),
    log    => $log,
    name   => 'ModPerl::Registry',
    policy => {cache => 'mtime', flush => 0, reset_inc => 0, chdir => 0},
)->to_app;

# Read from the kernel's report: a umask op here would be a marked one itself
sub process_umask () {
    open(my $fh, '<', '/proc/self/status') or die "Can't read /proc/self/status: $!";
    my ($mask) = join('', <$fh>) =~ /^Umask:\s*(\d+)/m;
    return $mask;
}

sub run_script ($script) { in_process_get($app, '/registry', $script)->[0] }

is run_script('pid.pl'), 200, 'a script that leaves the umask alone';
is run_script('pid.pl'), 200, 'again';
ok !Perennial::Executor::Umask::ran(), 'no umask op ran in the second request: nothing to put back';

is run_script('umask_posix.pl'), 200,    'a script that sets its umask';
is process_umask(),              '0022', 'put back after it';
ok !Perennial::Executor::Umask::ran(), 'and the putting back is not counted as a script\'s umask';

done_testing;
