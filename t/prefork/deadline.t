use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use Perennial::Test qw(start_server wait_until);

# RequestDeadline: a request that runs too long is cut, with the Perl stack in the error log
# and a 504 for the client; SlowRequestTime logs a stack sample and lets the request finish
my $dir = abs_path('t/life');

# The line of a fixture that matches $re
sub line_of ($file, $re) {
    open(my $fh, '<', "$dir/$file") or die "Can't read $file: $!";
    while (<$fh>) { return $. if $_ =~ $re }
    die "no line of $file matches $re";
}
my ($loop, $spin) = (line_of('loop.pl', qr/\$n\+\+/), line_of('loop.pl', qr/^spin\(\)/));
my $nap  = line_of('sleepy.pl', qr/^nap\(\)/);
my $busy = line_of('slow.pl',   qr/1 while/);

sub server ($location, %opt) {
    return start_server(
        workers => 1,
        conf    => <<"CONF" . ($opt{conf} // ''));
Alias /life $dir
<Location /life>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    $location
</Location>
CONF
}

subtest 'an endless loop is cut at the deadline' => sub {
    my $srv = server('RequestDeadline 1');
    ok wait_until(sub { $srv->idle == 1 }, 10, 'idle'), 'one worker';
    my ($pid) = map { $_->{pid} } $srv->slots;
    my $res = $srv->get('/life/loop.pl');
    is $res->{status}, 504, 'the client gets 504 Gateway Timeout';
    my $log = $srv->error_log;
    like $log,
        qr/worker $pid passed the request deadline \(1 s\) serving 'GET \/life\/loop\.pl HTTP\/1\.1'/,
        'the manager logs the deadline';
    like $log,
        qr/request deadline \(1 s\) passed: 'GET \/life\/loop\.pl HTTP\/1\.1' for 127\.0\.0\.1 stopped at \Q$dir\E\/loop\.pl line $loop \(in \S+::spin\) <- \Q$dir\E\/loop\.pl line $spin \(in \S+__perennial_script\)\n/,
        'the stack: file and line of the loop, and who called it';
    ok wait_until(sub { $srv->access_log =~ m{"GET /life/loop\.pl HTTP/1\.1" 504 } },
        5, 'the 504 line'),
        'the access log has the 504';
    ok $srv->wait_replaced([$pid], 1), 'a new worker replaced it';
    is $srv->get('/life/random.pl')->{status}, 200, 'and serves';
    like $srv->error_log,   qr/worker $pid exited \(status 1, /, 'its exit is logged';
    unlike $srv->error_log, qr/that request is lost/, 'and not as a request lost: it was answered';
    $srv->stop;
};

subtest 'a cleanup past the deadline: the worker is stopped, the answered request not lost' => sub {
    my $srv = server('RequestDeadline 1');
    ok wait_until(sub { $srv->idle == 1 }, 10, 'idle'), 'one worker';
    my ($pid) = map { $_->{pid} } $srv->slots;
    my $res = $srv->get('/life/late_cleanup.pl');
    is_deeply [@$res{qw(status content)}], [200, "answered\n"], 'the client has its response';
    ok $srv->wait_replaced([$pid], 1), 'the worker is stopped at the deadline and replaced';
    like $srv->error_log,   qr/worker $pid passed the request deadline \(1 s\)/, 'logged';
    unlike $srv->error_log, qr/that request is lost/, 'not as a request lost: it was answered';
    $srv->stop;
};

subtest 'a blocking system call is cut too' => sub {
    my $srv = server('RequestDeadline 1');
    my $res = $srv->get('/life/sleepy.pl');
    is $res->{status}, 504, 'a request stuck in a system call: 504';
    like $srv->error_log,
        qr/stopped at \Q$dir\E\/sleepy\.pl line (?:$nap|@{[$nap + 1]}) \(in \S+__perennial_script\)/,
        'the stack: the call that blocked, or the statement after it';
    $srv->stop;
};

subtest 'the deadline is per location: a server-wide one, and one turned off' => sub {
    my $srv = start_server(
        workers => 1,
        conf    => <<"CONF");
RequestDeadline 0.5
Alias /fast $dir
Alias /patient $dir
<Location /fast>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
<Location /patient>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    RequestDeadline 0
</Location>
CONF
    is $srv->get('/fast/slow.pl')->{status}, 504, 'the server-wide deadline applies';
    my $res = $srv->get('/patient/slow.pl');
    is $res->{status},  200,      'a location can turn it off';
    is $res->{content}, "done\n", 'and its request finishes';
    $srv->stop;
};

subtest 'a slow request gets a stack sample in the log and finishes' => sub {
    my $srv = server('SlowRequestTime 0.5');
    my $res = $srv->get('/life/slow.pl');
    is $res->{status},  200,      'answered';
    is $res->{content}, "done\n", 'in full';
    like $srv->error_log,
        qr/\[warn\] slow request \(SlowRequestTime 0\.5 s\): 'GET \/life\/slow\.pl HTTP\/1\.1' for 127\.0\.0\.1 running [\d.]+ s, at \Q$dir\E\/slow\.pl line $busy /,
        'the stack sample names the script line';
    my $fast = $srv->get('/life/random.pl');
    is $fast->{status}, 200, 'a fast request';
    my @samples = $srv->error_log =~ /slow request/g;
    is scalar(@samples), 1, 'one sample per slow request, none for fast ones';
    $srv->stop;
};

subtest 'a slow request that sleeps is not woken by its sample' => sub {
    my $srv = server('SlowRequestTime 0.5');
    is $srv->get('/life/nap.pl')->{content}, "slept its 2 seconds\n", 'the sleep lasted as asked';
    like $srv->error_log,
        qr/slow request \(SlowRequestTime 0\.5 s\): 'GET \/life\/nap\.pl HTTP\/1\.1' for \S+ running [\d.]+ s, waiting in \w*sleep: its stack is sampled when it runs again/,
        'the log says it is waiting, and why no sample is taken now';
    $srv->stop;
};

subtest 'a PSGI application has deadlines too' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 1, conf => "RequestDeadline 0.5\n");
    is $srv->get('/sleep/30')->{status}, 504, 'cut with 504';
    like $srv->error_log, qr/stopped at \S+pid\.psgi line \d+ \(in \S+__ANON__\)/,
        'the stack is in the application file';
    is $srv->get('/')->{status}, 200, 'a new worker serves';
    $srv->stop;
};

done_testing;
