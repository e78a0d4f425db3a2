use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use JSON::PP        ();
use Perennial::Test qw(scratch_dir start_server wait_until);

# perennial bench against a real Perennial serving the examples, with small bounded loads: the
# shape of the table, the CSV and JSON, and a chart that renders as an image
my $dir      = scratch_dir();
my $examples = abs_path('examples/perennial.conf');

sub spec ($text) {
    open(my $fh, '>', "$dir/test.bench") or die $!;
    print {$fh} $text;
    close $fh;
    return "$dir/test.bench";
}

sub bench (@args) {
    my $out = qx{$^X -Ilib bin/perennial bench @args 2>$dir/stderr};
    return (
        $out, $? >> 8,
        do { local (@ARGV, $/) = "$dir/stderr"; <> }
            // ''
    );
}

subtest 'a sweep of MaxClients over two URLs' => sub {
    my $file = spec(<<"SPEC");
Title       test sweep
Config      $examples
URL         /registry/heavy.pl?rows=20 /hello
Concurrency 2
Requests    20
Warmup      2
Vary        MaxClients 1 2 3
Set         LogLevel warn
SPEC
    my ($out, $code, $err) = bench($file, '--out', "$dir/out");
    is $code, 0,  'bench exits 0' or diag "$out\n$err";
    is $err,  '', 'no progress bar when not on a terminal';
    like $out, qr/^MaxClients\s+url \| avtime\s+p50\s+p99 completed failed\s+rps$/m,
        'the Guide\'s header';
    my @rows
        = $out =~ /^\s+([123])\s+(\S+) \|\s+([\d.]+)\s+\S+\s+\S+\s+(\d+)\s+(\d+)\s+([\d.]+)$/mg;
    is scalar(@rows) / 6, 6, 'a row per MaxClients and URL';
    for (my $i = 0; $i < @rows; $i += 6) {
        my ($mc, $url, $avtime, $completed, $failed, $rps) = @rows[$i .. $i + 5];
        is $completed, 20, "MaxClients $mc $url: 20 completed";
        is $failed,    0,  'none failed';
        cmp_ok $rps, '>', 0, "rps $rps";
    }
    like $out,
        qr/^Non-varying parameters:\n(?:.*\n)*LogLevel\s+: warn\n(?:.*\n)*Concurrency\s+: 2\n/m,
        'the settings that did not vary, under the table';
    like $out, qr/Measured with ab\./, 'says which load generator';

    open(my $csv, '<', "$dir/out/results.csv") or die $!;
    my @csv = <$csv>;
    is $csv[0],     "MaxClients,url,tool,avg_ms,p50_ms,p99_ms,completed,failed,rps\n", 'CSV header';
    is scalar @csv, 7, 'CSV: six rows';
    my $json = JSON::PP->new->decode(
        do { local (@ARGV, $/) = "$dir/out/results.json"; <> }
    );
    is scalar @{$json->{results}}, 6, 'JSON: six results';
    is_deeply [sort { $a <=> $b } map { $_->{settings}[0][1] } @{$json->{results}}],
        [1, 1, 2, 2, 3, 3],
        'with the setting of each';

    for my $chart ('chart.svg', 'chart-2.svg') {
        my $svg = do { local (@ARGV, $/) = "$dir/out/$chart"; <> };
        like $svg, qr/\A<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, "$chart is SVG";
        like $svg, qr/knee: MaxClients [123]/,                          'with the knee marked';
        is system('rsvg-convert', "$dir/out/$chart", '-o', "$dir/$chart.png"), 0,
            'rsvg-convert renders it';
        my $png = do { local (@ARGV, $/) = "$dir/$chart.png"; <> }
            // '';
        is substr($png, 0, 8),               "\x89PNG\r\n\x1a\n", 'into a PNG';
        is unpack('N', substr($png, 16, 4)), 760,                 '760 pixels wide';
    }
};

subtest '--target: the same measurements against a server already running' => sub {
    my $srv  = start_server(app => 'pid.psgi', workers => 2);
    my $file = spec("URL /\nConcurrency 1 2\nRequests 20\nWarmup 0\n");
    my ($out, $code, $err)
        = bench($file, '--target', 'mine=http://127.0.0.1:' . $srv->port, '--out', "$dir/target");
    is $code, 0, 'bench exits 0' or diag $err;
    like $out, qr/^target concurrency \| avtime/m, 'rows by target and concurrency';
    is scalar(() = $out =~ /^\s*mine\s+[12] \|.*\s20\s+0\s+[\d.]+$/mg), 2, 'two rows, 20 each';
    ($out, $code, $err) = bench($file, '--target', 'http://192.0.2.1:80');
    isnt $code, 0, 'a target off this host is refused';
    like $err, qr/only http:\/\/ and https:\/\/ URLs on this host/, 'says why';
    ($out, $code, $err) = bench($file, '--target', 'gone=http://127.0.0.1:1');
    isnt $code, 0, 'a target that does not answer';
    like $err, qr/target gone does not answer http:\/\/127\.0\.0\.1:1\/: .*refused/, 'is named';
    $srv->stop;
};

subtest 'Tool wrk with Requests: stops at the count, on kept-alive HTTP/1.1' => sub {
    my $srv  = start_server(app => 'pid.psgi', workers => 2, conf => "KeepAlive On\n");
    my $file = spec("URL /\nConcurrency 1 3\nTool wrk\nRequests 30\nWarmup 0\n");
    my ($out, $code, $err)
        = bench($file, '--target', 'mine=http://127.0.0.1:' . $srv->port, '--out', "$dir/wrk");
    is $code, 0, 'bench exits 0' or diag $err;
    is scalar(() = $out =~ /^\s*mine\s+[13] \|\s+[\d.]+\s+-\s+-\s+30\s+0\s+[\d.]+$/mg), 2,
        'two rows of 30 responses, a mean latency and no percentiles'
        or diag $out;
    $srv->stop;

    # wrk's (no User-Agent): 30 from the one client, 30 to 32 from the three (the other two
    # may have had a request on its way when wrk ended at the count)
    my $seen = () = $srv->access_log =~ m{"GET / HTTP/1\.1" 200 \d+ "-" "-"}g;
    ok $seen >= 60 && $seen <= 62, "the server saw 60 to 62 requests, not 120 s of them: $seen";
};

subtest 'a progress bar on a terminal' => sub {
    plan skip_all => 'script(1) is not installed' unless -x '/usr/bin/script';
    my $file = spec("Config $examples\nURL /hello\nRequests 10\nWarmup 0\nVary MaxClients 1 2\n");
    my $tty
        = qx{script -q -e -c "$^X -Ilib bin/perennial bench $file --out $dir/tty >/dev/null" /dev/null};
    is $? >> 8, 0, 'bench under a pseudo-terminal';
    like $tty, qr{\[\.{30}\] 1/2 MaxClients=1 c=1 /hello},      'the bar at the start';
    like $tty, qr{\[#{15}\.{15}\] 2/2 MaxClients=2 c=1 /hello}, 'half way';
    like $tty, qr{\r\e\[K\z},                                   'and wiped at the end';
};

subtest 'spec errors name the file and line' => sub {
    my $file = spec("URL /\nConcurrency many\nFrobnicate 1\nVary MaxClients 1\n");
    my (undef, $code, $err) = bench($file);
    isnt $code, 0, 'bench fails';
    like $err, qr/test\.bench line 2: Concurrency takes one or more numbers/, 'bad concurrency';
    like $err, qr/test\.bench line 3: unknown directive 'Frobnicate'/,        'unknown directive';
    like $err, qr/test\.bench line 4: Vary takes a directive and two or more values/, 'short Vary';
    (undef, $code, $err) = bench(spec("URL /\nConcurrency 8\nRequests 4\n"));
    like $err, qr/Requests 4 is fewer than Concurrency 8/, 'fewer requests than clients';
    $file = spec("Config $examples\nURL /hello\nVary MaxClients 1 2\nSet MaxClients zero\n");
    (undef, $code, $err) = bench($file);
    isnt $code, 0, 'a setting the server refuses';
    like $err, qr/did not start with MaxClients 1:.*MaxClients must be a positive integer/s,
        'is reported with the server\'s own error';
};

done_testing;
