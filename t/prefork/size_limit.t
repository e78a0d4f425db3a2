use v5.36;
use lib 't/lib';
use Test::More;
use File::Temp ();
use IO::Socket::IP;
use Perennial::Test qw(start_server wait_until);

# Apache2::SizeLimit's rules, measured from smaps: a worker that keeps memory retires after
# the request that passed the limit, says which limit and the figures, and is replaced
subtest 'a leaking application is retired by MaxUnsharedSize' => sub {
    my $srv = start_server(app => 'leak.psgi', workers => 1, conf => "MaxUnsharedSize 40M\n");
    my ($first, %pids);
    for (1 .. 40) {
        my $res = $srv->get('/');
        is $res->{status}, 200, 'answered' or last;
        $first //= $res->{content};
        $pids{$res->{content}}++;
        last if keys %pids > 1;
    }
    like $srv->error_log,
        qr/worker $first retires after this request: MaxUnsharedSize 40960 KB exceeded: unshared \d+ KB/,
        'the log says which limit, and the figures';
    ok wait_until(sub { $srv->error_log =~ /worker $first exited \(status 0/ }, 10, 'exit'),
        'the worker exited normally, after its response';
    cmp_ok scalar(keys %pids), '>', 1, 'a new worker answers next';
    $srv->stop;
};

subtest 'MaxProcessSize and SizeCheckInterval' => sub {
    my $srv = start_server(
        app     => 'leak.psgi',
        workers => 1,
        conf    => "MaxProcessSize 60M\nSizeCheckInterval 3\n"
    );
    my ($first, %pids);
    for (1 .. 40) {
        my $pid = $srv->get('/')->{content};
        $first //= $pid;
        $pids{$pid}++;
        last if keys %pids > 1;
    }
    my ($line) = $srv->error_log =~ /(retires after this request: MaxProcessSize .*)/;
    like $line, qr/MaxProcessSize 61440 KB exceeded: resident \d+ KB/, 'size limit named';
    is $pids{$first} % 3, 0, "checked every third request (retired after $pids{$first})";
    $srv->stop;
};

subtest 'MinSharedSize: a worker whose shared memory is too small retires' => sub {
    my $srv = start_server(app => 'pid.psgi', workers => 1, conf => "MinSharedSize 100G\n");
    my $pid = $srv->get('/')->{content};
    ok wait_until(
        sub {
            $srv->error_log
                =~ /worker $pid retires after this request: MinSharedSize \d+ KB not met: shared \d+ KB/;
        },
        10,
        'log line'
        ),
        'retired after its first request';
    $srv->stop;
};

subtest 'a worker that retires closes its kept-alive connection after the response' => sub {
    my $srv  = start_server(app => 'pid.psgi', workers => 1, conf => "MinSharedSize 100G\n");
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $!;
    $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    my $got = '';
    while ($got !~ /\r\n\r\n\d+/) { sysread($sock, $got, 4096, length $got) or last }
    my ($pid) = $got =~ /\r\n\r\n(\d+)/;
    like $got, qr{\AHTTP/1\.1 200 }, 'the request that passed the limit is answered';
    $sock->syswrite("GET / HTTP/1.1\r\nHost: x\r\n\r\n");    # On its way as the worker retires
    my $rest = '';
    1 while sysread($sock, $rest, 4096, length $rest);
    is $rest, '', 'the connection closes without answering the next request (the client retries)';
    ok wait_until(sub { $srv->error_log =~ /worker $pid exited \(status 0/ }, 10, 'exit'),
        'and the worker exits normally';
    $srv->stop;
};

subtest 'sizes are checked when the configuration is read' => sub {
    my $conf = File::Temp->new(SUFFIX => '.conf');
    print {$conf} "Listen 127.0.0.1:0\nMaxUnsharedSize lots\nMinSharedSize 2G\n";
    close $conf;
    my $out = qx{$^X -Ilib bin/perennial configtest -c $conf 2>&1};
    like $out, qr/line 2: MaxUnsharedSize must be a size in KB, or with K, M or G, got 'lots'/,
        'a bad size names the file line and the reason';
    unlike $out, qr/line 3/, 'a size with a unit is fine';
};

done_testing;
