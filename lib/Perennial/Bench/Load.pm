package Perennial::Bench::Load;
use v5.36;
use Exporter qw(import);
use POSIX    ();
use URI      ();

# Drives a real load generator against a loopback URL and reads its report: ab (Apache's,
# HTTP/1.0, a connection per request, as the mod_perl Guide measured) bounded in requests and
# seconds, or wrk (HTTP/1.1 keep-alive) bounded in seconds.

our @EXPORT_OK = qw(loopback run_load);

# The URL, if it points at this host; dies otherwise
sub loopback ($url) {
    my $uri  = URI->new($url);
    my $host = eval { $uri->host } // '';
    die "Can't drive '$url': only http:// and https:// URLs on this host (127.0.0.1, ::1,"
        . " localhost)\n"
        unless ($uri->scheme // '') =~ /\Ahttps?\z/
        && $host =~ /\A(?:127\.\d+\.\d+\.\d+|::1|localhost)\z/;
    return $uri->canonical->as_string;
}

# {tool, rps, avg_ms, p50_ms, p90_ms, p99_ms, completed, failed, seconds}
sub run_load (%a) {
    my $url = loopback($a{url});
    my $r   = $a{tool} eq 'wrk' ? _wrk($url, %a) : _ab($url, %a);
    defined $r->{$_} and $r->{$_} += 0
        for qw(rps avg_ms p50_ms p90_ms p99_ms completed failed seconds);
    return $r;
}

sub _ab ($url, %a) {

    # -t before -n: ab's -t alone means 50000 requests
    my @cmd = (
        'ab', '-q', '-r', '-c', $a{concurrency}, '-t', $a{seconds}, '-n', $a{requests}, '-s',
        $a{timeout} // 30,
        ($a{keepalive} ? '-k' : ()), $url
    );
    my $out = _run(@cmd);
    my %r   = (tool => 'ab', raw => $out);
    ($r{completed}) = $out =~ /Complete requests:\s+(\d+)/;
    ($r{rps})       = $out =~ /Requests per second:\s+([\d.]+)/;
    ($r{avg_ms})    = $out =~ /Time per request:\s+([\d.]+) \[ms\] \(mean\)/;
    ($r{seconds})   = $out =~ /Time taken for tests:\s+([\d.]+)/;

    # A dynamic page's length varies: ab's "Length" failures are not errors
    my ($connect, $receive, $exceptions)
        = $out =~ /Connect: (\d+), Receive: (\d+), Length: \d+, Exceptions: (\d+)/;
    my ($non2xx) = $out =~ /Non-2xx responses:\s+(\d+)/;
    $r{failed} = ($connect // 0) + ($receive // 0) + ($exceptions // 0) + ($non2xx // 0);
    for my $p (50, 90, 99) { ($r{"p${p}_ms"}) = $out =~ /^\s+$p%\s+(\d+)/m }
    _failed(ab => $url, $out) unless defined $r{rps};
    return \%r;
}

sub _wrk ($url, %a) {
    my $threads = $a{concurrency} < 2 ? 1 : 2;
    my @cmd     = (
        'wrk', "-t$threads", "-c$a{concurrency}", "-d$a{seconds}s", '--latency', '--timeout',
        ($a{timeout} // 30) . 's',
        (map { ('-H', $_) } @{$a{headers} // []}), $url
    );
    my $out = _run(@cmd);
    my %r   = (tool => 'wrk', raw => $out);
    ($r{completed}, $r{seconds}) = $out =~ /(\d+) requests in ([\d.]+)(?:s|ms|m)/;
    ($r{rps}) = $out =~ /Requests\/sec:\s+([\d.]+)/;
    my ($avg) = $out =~ /Latency\s+([\d.]+\w+)/;
    $r{avg_ms} = _ms($avg);

    for my $p (50, 90, 99) {
        my ($v) = $out =~ /^\s+$p(?:\.000)?%\s+([\d.]+\w+)/m;
        $r{"p${p}_ms"} = _ms($v);
    }
    $r{failed} = 0;
    $r{failed} += $_ for $out =~ /(?:connect|read|write|timeout) (\d+)/g;
    $r{failed} += $1 if $out  =~ /Non-2xx or 3xx responses: (\d+)/;
    _failed(wrk => $url, $out) unless defined $r{rps};
    return \%r;
}

sub _ms ($text) {
    return unless defined $text;
    my ($n, $unit) = $text =~ /([\d.]+)(\w+)/;
    return $n * ({us => 0.001, ms => 1, s => 1000, m => 60_000}->{$unit} // 1);
}

# The tool's report, its complaints included
sub _run (@cmd) {
    my $pid = open(my $fh, '-|') // die "Can't fork for $cmd[0]: $!\n";
    if (!$pid) {
        open(STDERR, '>&', \*STDOUT) or POSIX::_exit(126);
        exec @cmd                    or do { print "Can't run $cmd[0]: $!\n"; POSIX::_exit(127) };
    }
    my $out = do { local $/; <$fh> }
        // '';
    close $fh;
    return $out;
}

# The first lines of a report that had no figures
sub _failed ($tool, $url, $out) {
    my @lines = grep {/\S/} split /\n/, $out;
    splice @lines, 3 if @lines > 3;
    die "$tool gave no figures for $url: " . (join(' / ', @lines) || 'no output') . "\n";
}

1;

__END__

=head1 NAME

Perennial::Bench::Load - run ab or wrk against a loopback URL and read the figures

=head1 SYNOPSIS

    my $r = run_load(tool => 'ab', url => 'http://127.0.0.1:8529/hello', concurrency => 10,
        requests => 2000, seconds => 30);
    printf "%.0f req/s, %.2f ms mean, %d failed\n", @$r{qw(rps avg_ms failed)};

=head1 DESCRIPTION

C<ab> sends a fixed number of requests (C<-n>) and stops after C<-t> seconds at the latest, a
new connection per request unless C<keepalive> (C<-k>); C<wrk> keeps its connections alive and
runs for C<seconds>. Both report requests per second, the mean and the 50th, 90th and 99th
percentile latency in milliseconds, completed and failed requests. A response whose length
differs from the first one's is not a failure (ab counts those); connection errors,
exceptions and non-2xx answers are. Only URLs on this host are accepted.

=head1 FUNCTIONS

=head2 loopback

    my $url = loopback('http://127.0.0.1:8529/x');    # dies for any other host

=head2 run_load

    my $result = run_load(tool => 'ab'|'wrk', url => $url, concurrency => $n,
        requests => $n, seconds => $s, timeout => $s, keepalive => 0,
        headers => ['Connection: close']);    # headers: wrk only

=cut
