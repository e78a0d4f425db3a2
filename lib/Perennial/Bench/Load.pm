package Perennial::Bench::Load;
use v5.36;
use Exporter    qw(import);
use File::Temp  qw(tempfile);
use POSIX       ();
use Time::HiRes ();
use URI         ();

# Drives a real load generator against a loopback URL and reads its report: ab (Apache's,
# HTTP/1.0, a connection per request, as the mod_perl Guide measured) bounded in requests and
# seconds, or wrk (HTTP/1.1 keep-alive) bounded in seconds, and in requests if asked.

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
    return _wrk_counted($url, %a) if $a{requests};
    return _wrk_report($url, _run(_wrk_command($url, %a)));
}

# wrk's own report, read
sub _wrk_report ($url, $out) {
    my %r = (tool => 'wrk', raw => $out);
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

sub _wrk_command ($url, %a) {
    my $threads = $a{threads} // ($a{concurrency} < 2 ? 1 : 2);
    return (
        'wrk',               "-t$threads",
        "-c$a{concurrency}", "-d$a{seconds}s",
        '--latency',         '--timeout',
        ($a{timeout} // 30) . 's', (map { ('-H', $_) } @{$a{headers} // []}),
        ($a{script} ? ('-s', $a{script}) : ()), $url
    );
}

# wrk bounded in requests too. wrk has no -n: a script of its own, in one thread, counts the
# responses on all its connections and ends wrk at the count, after a line that says how many
# were not 2xx or 3xx. The mean latency is then the clients' time over the requests (each
# client waits for its response before it sends again); the percentiles are not known. A run
# cut by the seconds gives wrk's own report, and the requests it did not complete are failures.
# (ab -k speaks HTTP/1.0 keep-alive, which a server may answer with a connection each: uWSGI's
# --http11-socket does. wrk bounded in requests is how N requests go on kept-alive HTTP/1.1.)
sub _wrk_counted ($url, %a) {
    my ($fh, $script)
        = tempfile('perennial-wrk-XXXXXX', TMPDIR => 1, SUFFIX => '.lua', UNLINK => 1);
    print {$fh} <<~"LUA";
        local done, bad = 0, 0
        function response(status, headers, body)
          done = done + 1
          if status < 200 or status > 399 then bad = bad + 1 end
          if done == $a{requests} then
            io.write(string.format("perennial-bench: %d responses, %d failed\\n", done, bad))
            io.flush()
            os.exit(0)
          end
        end
        LUA
    close $fh or die "Can't write $script: $!\n";
    my $t0   = Time::HiRes::time();
    my $out  = _run(_wrk_command($url, %a, threads => 1, script => $script));
    my $took = Time::HiRes::time() - $t0;
    my ($done, $bad) = $out =~ /^perennial-bench: (\d+) responses, (\d+) failed$/m;
    if (!defined $done) {    # Cut by the seconds: its report, and what it did not send failed
        my $r = _wrk_report($url, $out);
        return {%$r, failed => $r->{failed} + $a{requests} - $r->{completed}};
    }
    return {
        tool      => 'wrk',
        raw       => $out,
        seconds   => $took,
        completed => $done,
        failed    => $bad,
        rps       => $done / $took,
        avg_ms    => 1000 * $a{concurrency} * $took / $done
    };
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
new connection per request unless C<keepalive> (C<-k>, HTTP/1.0's keep-alive); C<wrk> keeps its
connections alive (HTTP/1.1) and runs for C<seconds>, or, given C<requests>, stops after that
many responses (a script of its own counts them, in one wrk thread), with the mean latency
taken from the clients' time and no percentiles. That is how N requests go on kept-alive
HTTP/1.1 connections, which not every server gives an HTTP/1.0 client: uWSGI's
--http11-socket answers ab -k with a connection each. Both report requests per second, the mean and the 50th, 90th and 99th
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
