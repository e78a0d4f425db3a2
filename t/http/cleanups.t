use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir slurp start_server wait_until);

# psgix.cleanup: what an application leaves to run after its response (mod_perl's log and
# cleanup phases, a CGI script's reaping) runs once the response is sent, in order, with the
# status sent; one that dies is logged and the rest still run. The same under the loop in C
# (xs/LoopCleanup.c) and the Perl loop, kept-alive and not.

my $dir = scratch_dir();
chmod 0777, $dir or die $!;
my $host        = "Host: example.test\r\n";
my @connections = (
    [   "GET /one HTTP/1.1\r\n$host\r\n",
        "GET /gone HTTP/1.1\r\n$host\r\n",
        "GET /last HTTP/1.1\r\n${host}Connection: close\r\n\r\n",
    ],
    ["GET /alone HTTP/1.0\r\n\r\n"],
);
my @paths = qw(/one /gone /last /alone);
my @want  = map {
    my $status = $_ eq '/gone' ? 410 : 200;
    ("first $_ $status", "third $_")
} @paths;

for my $build ('C', 'Perl') {
    local $ENV{PERENNIAL_PURE_PERL} = $build eq 'Perl' ? 1 : undef;
    local $ENV{CLEANUP_LOG}         = "$dir/\L$build\E.txt";
    my $srv = start_server(app => 'cleanups.psgi', workers => 1);
    wait_until(sub { $srv->error_log =~ /hot path in (\w+)/ }, 10, 'start line');
    like $srv->error_log, qr/hot path in $build\b/, "the $build server runs its loop in $build";
    my @answers = map { raw_request($srv->port, join '', @$_) } @connections;
    like $answers[0], qr{\AHTTP/1\.1 200 .*HTTP/1\.1 410 .*HTTP/1\.1 200 }s,
        "$build: the kept-alive connection's three answers";
    ok wait_until(sub { -e $ENV{CLEANUP_LOG} && (() = slurp($ENV{CLEANUP_LOG}) =~ /\n/g) == @want },
        10, 'cleanups'),
        "$build: the cleanups that did not die ran, for each request";
    is_deeply [split /\n/, slurp($ENV{CLEANUP_LOG})], \@want,
        "$build: in order, after the one that died, with the status sent";
    ok wait_until(
        sub { (() = $srv->error_log =~ /cleanup handler died: the second failed/g) == @paths },
        10, 'log'),
        "$build: each that died is logged";
    like $srv->error_log, qr{cleanup handler died: the second failed for /gone \(request /gone\)},
        "$build: with its request";

    # A `last` outside a loop dies there (the loop in C calls each on a stack of its own), and
    # an exit asked for by a cleanup handler ends the worker after that connection
    raw_request($srv->port, "GET /jump HTTP/1.0\r\n\r\n");
    ok wait_until(sub { slurp($ENV{CLEANUP_LOG}) =~ m{third /jump\n} }, 10, 'jump'),
        "$build: a cleanup that leaves by last: the next one still runs";
    my $both = raw_request($srv->port,
        "GET /retire HTTP/1.1\r\n$host\r\nGET /after HTTP/1.1\r\n$host\r\n");
    my ($pid) = $both =~ /\r\n\r\n(\d+)\n/;
    unlike $both, qr{HTTP/1\.1 200 .*HTTP/1\.1 200 }s,
        "$build: no answer after an exit asked for in a cleanup, on that connection";
    ok wait_until(sub { $srv->error_log =~ /worker $pid exited/ }, 10, 'exit'),
        "$build: and the worker that asked ends";
    $srv->stop;
}

done_testing;
