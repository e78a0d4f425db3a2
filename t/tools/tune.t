use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(scratch_dir);
use POSIX           qw(floor);
use Perennial::CLI::Tools;

# perennial tune against the examples with a small bounded load: the formula's arithmetic on
# the figures it measured, the recommendation's rule, and a fragment the server accepts
my $dir = scratch_dir();

my $out
    = qx{$^X -Ilib bin/perennial tune -c examples/perennial.conf --url '/registry/heavy.pl?rows=50' --url /hello --ram 400M --workers 2 --requests 200 --concurrency 4 --sweep '1 2 3' --out $dir/tune.conf 2>&1};
is $? >> 8, 0, 'tune exits 0' or diag $out;

subtest 'the measurements and the formula' => sub {
    my @workers = $out =~ /^(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) \(was \d+\)$/mg;
    is scalar(@workers) / 7, 2, 'a line per worker: slot, pid, requests, RSS, PSS, shared, private';
    my ($ram)    = $out =~ /^Total_RAM\s+= (\d+) KB \(given with --ram\)$/m;
    my ($max)    = $out =~ /^Max_Process_Size\s+= (\d+) KB/m;
    my ($shared) = $out =~ /^Shared_RAM_per_Child = (\d+) KB/m;
    is $ram, 400 * 1024, 'Total_RAM is the --ram budget';
    my @rss = map { $workers[$_ * 7 + 3] } 0 .. 1;
    my @sh  = map { $workers[$_ * 7 + 5] } 0 .. 1;
    is $max,    (sort { $b <=> $a } @rss)[0], 'Max_Process_Size is the largest RSS';
    is $shared, (sort { $a <=> $b } @sh)[0],  'Shared_RAM_per_Child is the smallest shared size';
    cmp_ok $shared, '>', 0,    'workers share memory';
    cmp_ok $shared, '<', $max, 'and have some of their own';
    my $expect = floor(($ram - $max) / ($max - $shared));
    like $out, qr/= \($ram - $max\) \/ \($max - $shared\) = $expect$/m,
        "MaxClients by the formula: $expect";
    like $out,
        qr/Without sharing it would be Total_RAM \/ Max_Process_Size = @{[floor($ram \/ $max)]}\./,
        'and without sharing';
    like $out, qr/Private memory grew -?[\d.]+ KB per request\./, 'growth per request';
};

subtest 'the sweep and the recommendation' => sub {
    like $out, qr/^MaxClients \| avtime\s+p50\s+p99 completed failed\s+rps$/m, 'the sweep table';
    is scalar(() = $out =~ /^\s+[123] \|\s+[\d.]+\s+\S+\s+\S+\s+200\s+0\s+[\d.]+$/mg), 3,
        'three points of 200 requests, none failed';
    my ($knee) = $out =~ /^Knee: MaxClients (\d+)\.$/m;
    ok $knee, "a knee: $knee";
    my ($formula) = $out =~ /\) = (\d+)$/m;
    my %set = do { local (@ARGV, $/) = "$dir/tune.conf"; <> }
        =~ /^(\w+)\s+(\d+)$/mg;
    is $set{MaxClients}, ($knee < $formula ? $knee : $formula),
        'MaxClients: the smaller of the two';
    is $set{StartServers}, $set{MaxClients}, 'a dedicated machine starts them all';
    ok $set{MinSpareServers} >= 1 && $set{MaxSpareServers} >= $set{MinSpareServers},
        'spare servers';
    ok $set{MaxRequestsPerChild} >= 100, "MaxRequestsPerChild $set{MaxRequestsPerChild}";
    ok $set{MaxUnsharedSize} > 0,        "MaxUnsharedSize $set{MaxUnsharedSize}";
    like $out, qr/^Why:\n- memory allows \d+ workers/m, 'with the reasons';
};

subtest 'the fragment is a config the server accepts' => sub {
    open(my $fh, '>', "$dir/check.conf") or die $!;
    print {$fh} "Include tune.conf\n";
    close $fh;
    my $check = qx{$^X -Ilib bin/perennial configtest -c $dir/check.conf 2>&1};
    is $? >> 8, 0, 'configtest passes' or diag $check;
};

subtest 'the Guide\'s example, and the rules on given figures' => sub {
    require Perennial::Tune;
    my $f = Perennial::Tune::formula(400 * 1024, 10 * 1024, 4 * 1024);
    is $f->{max_clients}, 65, 'RAM 400 MB, processes of 10 MB sharing 4 MB: 65, as the Guide';
    is $f->{no_sharing},  40, 'and 40 if nothing were shared';
    my %m = (growth_kb_per_request => 1, requests => 1000, workers => [{}, {}]);
    my $r = Perennial::Tune::recommend(
        {   formula => $f,
            memory  => \%m,
            sweep   =>
                {knee => 8, results => [map { {settings => [[MaxClients => $_]]} } 1, 2, 4, 8, 16]}
        },
        0
    );
    is $r->{settings}{MaxClients}, 8, 'the CPU\'s knee when it is below the memory figure';
    is $r->{settings}{MaxUnsharedSize}, 2 * 6144 + 16384,
        'MaxUnsharedSize: twice the unshared size and 16 MB';
    is $r->{settings}{MaxRequestsPerChild}, 22_000,
        'MaxRequestsPerChild: the headroom at 1 KB a request';
    $r = Perennial::Tune::recommend(
        {   formula => $f,
            memory  => \%m,
            sweep   => {
                knee    => 16,
                results => [map { {settings => [[MaxClients => $_]]} } 4, 8, 16, 32, 64, 128]
            }
        },
        1
    );
    is $r->{settings}{MaxClients}, 16, 'the knee again, on a shared machine';
    is_deeply [@{$r->{settings}}{qw(StartServers MinSpareServers MaxSpareServers)}], [4, 2, 8],
        'a quarter started, two spare, half at most';
};

subtest 'URLs from an access log, and bad arguments' => sub {
    open(my $fh, '>', "$dir/access.log") or die $!;
    my $line = sub ($path, $status = 200) {
        qq{127.0.0.1 - - [22/Nov/2026:10:00:00 +0000] "GET $path HTTP/1.1" $status 12 "-" "ab" 1500\n};
    };
    print {$fh} $line->('/a') x 3, $line->('/b') x 5, $line->('/c'), $line->('/missing', 404) x 9;
    close $fh;
    is_deeply [Perennial::CLI::Tools::top_urls("$dir/access.log", 2)], ['/b', '/a'],
        'the most requested paths that answered';
    my $err = qx{$^X -Ilib bin/perennial tune -c examples/perennial.conf 2>&1};
    isnt $? >> 8, 0, 'no URLs: refused';
    like $err, qr/tune needs the URLs/, 'says what to give';
    $err = qx{$^X -Ilib bin/perennial tune -c examples/perennial.conf --url / --ram lots 2>&1};
    like $err, qr/--ram takes a size such as 400M/, 'a bad --ram';
};

done_testing;
