use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir slurp start_server wait_until);

# The access log's line of a request the loop in C serves (xs/LoopLog.c) is the line the Perl
# loop writes for it: the same requests, kept alive (pipelined) and not, to a server on the C
# functions and one on their Perl twins, every field of the format that does not change from
# run to run

plan skip_all => 'the C functions are not built (make xs)'
    unless -e 'lib/auto/Perennial/HTTP/Core/Core.so';

my $dir = scratch_dir();
chmod 0777, $dir or die $!;

my $format
    = '%h %l %u \"%r\" %>s %b %B %O %I %X \"%{Content-Type}o\" \"%{X-Multi}o\" %v %V %m %U %q %H';

my $host        = "Host: example.test\r\n";
my @connections = (
    [   "GET /?a=1 HTTP/1.1\r\n$host\r\n",
        "HEAD / HTTP/1.1\r\n$host\r\n",
        "GET /multi HTTP/1.1\r\n${host}User-Agent: x\r\n\r\n",
        "GET /none HTTP/1.1\r\n$host\r\n",
        "GET /stream HTTP/1.1\r\n$host\r\n",
        "GET /delayed HTTP/1.1\r\n$host\r\n",
        "POST /post HTTP/1.1\r\n${host}Content-Length: 4\r\n\r\nbody",
        "GET /last HTTP/1.1\r\n${host}Connection: close\r\n\r\n",
    ],
    ["GET /die HTTP/1.1\r\n$host\r\n"],
    ["GET /one HTTP/1.0\r\n\r\n"],
    ["GET /kept HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "GET /closed HTTP/1.0\r\n\r\n"],
);

my %lines;
for my $build ('C', 'Perl') {
    local $ENV{PERENNIAL_PURE_PERL} = $build eq 'Perl' ? 1 : undef;
    my $log = "$dir/\L$build\E.log";
    my $srv = start_server(
        app     => 'log_kinds.psgi',
        workers => 1,
        conf    => qq{CustomLog $log "$format"\n}
    );
    wait_until(sub { $srv->error_log =~ /hot path in (\w+)/ }, 10, 'start line');
    like $srv->error_log, qr/hot path in $build\b/, "the $build server runs its loop in $build";
    raw_request($srv->port, join '', @$_) for @connections;    # Each connection's pipelined
    my $count = 0;
    $count += @$_ for @connections;
    ok wait_until(sub { (() = slurp($log) =~ /\n/g) == $count }, 10, 'lines'),
        "$build: a line for each of the $count requests";
    $lines{$build} = [split /\n/, slurp($log)];
    $srv->stop;
}
is_deeply $lines{C}, $lines{Perl}, 'the lines are the same' or diag explain \%lines;
like $lines{C}[0], qr{"GET /\?a=1 HTTP/1\.1" 200 6 6 \d+ \d+ \+ "text/plain" "-" },
    'a kept-alive request: its bytes, its head, +';
like $lines{C}[2], qr{"one, two"},                  'a header sent twice: both values';
like $lines{C}[7], qr{ - "text/plain"},             'the request that closed: -';
like $lines{C}[8], qr{" 500 (\d+) \1 (\d+) \d+ - }, 'an application that died: 500, closed';
my ($body, $all) = $lines{C}[8] =~ /" 500 (\d+) \1 (\d+) /;
cmp_ok $all, '>', $body + 50, '%O counts the error\'s head too';

done_testing;
