use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Time::HiRes             ();
use Perennial::Test         qw(scratch_dir start_server wait_until write_file);
use Perennial::Test::Apache qw(apache_available apache_head start_apache);
use Perennial::Test::Corpus qw(corpus);

# A corpus of malformed requests (Perennial::Test::Corpus: over a thousand, in categories and
# seeded random mutations), each sent on its own connection to Apache 2.4 prefork with
# HttpProtocolOptions Strict (its default; started here) and to Perennial, both running the same
# CGI script for every URL. Where Apache refuses a request Perennial must not serve it; Perennial
# must answer every case within 5 s, keep its worker, and serve a normal request afterwards.
# The counts per category are printed for both servers.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
write_file("$dir/cgi/echo.cgi", "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\nok\\n'\n",
    0755);
system("chmod -R a+rX $dir") == 0 or die;    # Apache's children run as www-data
my $conf = <<"CONF";
Timeout 3
ScriptAliasMatch ^/ $dir/cgi/echo.cgi
<Directory $dir/cgi>
    Require all granted
</Directory>
CONF
write_file("$dir/apache.conf", apache_head($dir, 'CORPUS_PORT', qw(authz_core alias cgi)) . $conf);
my ($apid, $aport) = start_apache("$dir/apache.conf", 'CORPUS_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => $conf);
wait_until(sub { $srv->idle == 1 }, 10, 'the worker, its pid in its slot');
my $worker = ($srv->slots)[0]{pid};
local $SIG{PIPE} = 'IGNORE';

# The first status a server answers with, 'closed' when it closes without one, 'hang' when it
# neither answers nor closes within 5 s, and what it sent. The client half-closes after sending,
# so a request cut short ends at once instead of waiting for Timeout; it never retries.
sub answer ($port, $bytes) {
    my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port, Timeout => 5)
        or return 'no connection';
    for (my $at = 0; $at < length $bytes;) {
        my $n = syswrite $sock, $bytes, 65_536, $at or last;
        $at += $n;
    }
    shutdown $sock, 1;
    my ($out, $until) = ('', Time::HiRes::time() + 5);
    while (1) {
        my $left = $until - Time::HiRes::time();
        return ($out =~ m{\AHTTP/1\.\d (\d{3})} ? $1 : 'hang', $out) if $left <= 0;
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        select(my $rout = $rin, undef, undef, $left) or next;
        my $n = sysread $sock, $out, 65_536, length $out;
        last unless $n;
        $out         =~ s{\AHTTP/1\.\d 1\d\d [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n}{};    # 100 Continue
        last if $out =~ m{\AHTTP/1\.\d [23]\d\d } || _whole($out);    # Served, or all of a refusal
    }
    return ($out =~ m{\AHTTP/1\.\d (\d{3})} ? $1 : 'closed', $out);
}

# A response whose head and Content-Length's worth of body are in
sub _whole ($out) {
    my $end = index $out, "\r\n\r\n";
    return 0 if $end < 0;
    my ($length) = substr($out, 0, $end) =~ /\r\nContent-Length: *(\d+)/i or return 0;
    return length($out) - $end - 4 >= $length;
}

sub served ($status) { $status =~ /\A[23]\d\d\z/ }

sub shown ($bytes) {
    my $text = substr($bytes, 0, 120) =~ s/([^\x20-\x7e])/sprintf '\\x%02x', ord $1/ger;
    return length $bytes > 120 ? "$text..." : $text;
}

my @cases = corpus(15, 700);
cmp_ok scalar @cases, '>=', 1000, scalar(@cases) . ' cases';
my (%count, @leniencies, @hangs, @unexplained);
my $t0 = Time::HiRes::time();
for my $case (@cases) {
    my ($category, $name, $bytes) = @$case;
    my ($apache) = answer($aport, $bytes);
    my ($perennial, $out) = answer($srv->port, $bytes);
    my $c = $count{$category} //= {};
    $c->{cases}++;
    $c->{apache_refused}++    unless served($apache);
    $c->{perennial_refused}++ unless served($perennial);
    $c->{stricter}++ if served($apache) && !served($perennial);
    push @hangs, "$category: $name" if $perennial eq 'hang';

    # A refusal of the request's bytes says why (404 is the file's own page, as Apache's)
    push @unexplained, "$category: $name: $perennial"
        if $perennial =~ /\A[45]\d\d\z/
        && $perennial != 404
        && $out !~ /\r\n\r\n[^\n]*\nThe request was refused: [^\n]+\.\n\z/;
    push @leniencies, "$category: $name: Apache $apache, Perennial $perennial: " . shown($bytes)
        if !served($apache) && served($perennial);
}
my $seconds = Time::HiRes::time() - $t0;

diag sprintf '%-10s %6s %8s %10s %9s', qw(category cases Apache Perennial stricter);
for my $category (sort keys %count) {
    my $c = $count{$category};
    diag sprintf '%-10s %6d %8d %10d %9d', $category, $c->{cases}, $c->{apache_refused} // 0,
        $c->{perennial_refused} // 0, $c->{stricter} // 0;
}
diag sprintf 'refused of %d cases; both servers asked in %.1f s', scalar @cases, $seconds;

is scalar @leniencies, 0, 'no request that Apache refuses is served' or diag join "\n", @leniencies;
is scalar @hangs, 0, 'every request is answered or closed within 5 s' or diag join "\n", @hangs;
is scalar @unexplained, 0, 'every refusal says why in its body'
    or diag join "\n", @unexplained;
ok $srv->alive, 'the server is running';
is + ($srv->slots)[0]{pid}, $worker, 'the same worker served them all';
is + (answer($srv->port, "GET /after HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))[0],
    200,
    'and serves a normal request afterwards';
my @errors = grep { /non-portable|at \S+ line \d+\.|\[error\]/ && !/reached MaxClients/ }
    split /\n/, $srv->error_log;
is scalar @errors, 0, 'no client input made a perl warning or an error' or diag join "\n", @errors;

$srv->stop;
kill 'TERM', $apid;
waitpid $apid, 0;
done_testing;
