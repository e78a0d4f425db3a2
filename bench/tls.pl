#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use File::Temp                qw(tempdir);
use IO::Socket::SSL           qw(SSL_VERIFY_NONE);
use Time::HiRes               ();
use Perennial::Bench::Load    qw(run_load);
use Perennial::Bench::Options qw(options);
use Perennial::Bench::Servers qw(spawn start_server stop_server);

# HTTPS requests/s: Perennial behind nginx, with the configuration Perennial ships
# (examples/nginx/perennial-tls.conf: TLS at nginx, kept-alive HTTP/1.1 to Perennial), against
# Starman terminating TLS itself (--enable-ssl), the same hello world with the same workers,
# keep-alive off (a TLS handshake per request) and on. Plain HTTP to Perennial is the limit. The
# servers take turns, a round at a time, and each one's median run is given. Every load is
# bounded by wrk's -d.

my %opt = (workers => 4, connections => 16, duration => 5, rounds => 3, nginx_workers => 2);
options(
    \%opt,
    'Usage: perl bench/tls.pl [--workers 4] [--nginx-workers 2] [--connections 16] [--duration 5]'
        . ' [--rounds 3]',
    'workers=i',
    'nginx_workers|nginx-workers=i',
    'connections=i',
    'duration=i',
    'rounds=i'
);
my $app = "$FindBin::RealBin/apps/hello.psgi";
my $dir = tempdir(CLEANUP => 1);
system(
    'openssl', 'req',          '-x509', '-newkey', 'rsa:2048',
    '-nodes',  '-days',        '1',     '-subj',   '/CN=localhost',
    '-keyout', "$dir/key.pem", '-out',  "$dir/cert.pem"
    ) == 0
    or die "openssl could not make a certificate\n";

my %result;
for my $ka (0, 1) {
    my $perennial
        = start_server('perennial', app => $app, workers => $opt{workers}, keepalive => 1);
    my %url = (
        'perennial (http)' => "http://127.0.0.1:$perennial->{port}/",
        'nginx+perennial'  => 'https://127.0.0.1:' . _nginx($perennial->{port}, \my $nginx) . '/',
        'starman --enable-ssl' => 'https://127.0.0.1:' . _starman(\my $starman) . '/',
    );
    my @names   = sort keys %url;
    my @headers = $ka ? () : ('Connection: close');
    run_load(
        tool        => 'wrk',
        url         => $url{$_},
        concurrency => $opt{connections},
        seconds     => 2,
        headers     => \@headers
    ) for @names;    # Warm
    my %runs;
    for my $round (1 .. $opt{rounds}) {
        for my $name ($round % 2 ? @names : reverse @names) {
            my $r = run_load(
                tool        => 'wrk',
                url         => $url{$name},
                concurrency => $opt{connections},
                seconds     => $opt{duration},
                headers     => \@headers
            );
            push @{$runs{$name}}, $r;
            printf STDERR "round %d %-22s keep-alive %-3s %9.0f req/s\n", $round, $name,
                $ka ? 'on' : 'off', $r->{rps};
        }
    }
    kill 'QUIT', $nginx;
    waitpid $nginx, 0;
    stop_server($_) for $perennial, $starman;
    for my $name (@names) {
        my @sorted = sort { $a->{rps} <=> $b->{rps} } @{$runs{$name}};
        $result{$name}{$ka} = $sorted[$#sorted / 2];
    }
}

say '';
say
    "hello.psgi over HTTPS, $opt{workers} workers (nginx: $opt{nginx_workers}), wrk -c$opt{connections}"
    . " -d$opt{duration}s, the median of $opt{rounds} rounds";
say sprintf '%-22s %-10s %10s %10s %8s', 'server', 'keepalive', 'req/s', 'p99 ms', 'errors';
for my $ka (0, 1) {
    for my $name (sort keys %result) {
        my $r = $result{$name}{$ka};
        say sprintf '%-22s %-10s %10.0f %10.2f %8d', $name, $ka ? 'on' : 'off', $r->{rps},
            $r->{p99_ms} // 0, $r->{failed} // 0;
    }
    my ($front, $starman) = map { $result{$_}{$ka}{rps} } 'nginx+perennial', 'starman --enable-ssl';
    say sprintf 'keep-alive %-3s: nginx+perennial / starman --enable-ssl = %.2fx',
        $ka      ? 'on'              : 'off',
        $starman ? $front / $starman : 0;
}

# nginx with the shipped configuration, in front of Perennial's port; returns its port
sub _nginx ($upstream, $pid) {
    my $site
        = do { local (@ARGV, $/) = ("$FindBin::RealBin/../examples/nginx/perennial-tls.conf"); <> };
    my $port = _free_port();
    $site =~ s/listen 443 ssl http2;/listen 127.0.0.1:$port ssl http2;/ or die "no listen line\n";
    $site =~ s/server 127\.0\.0\.1:8080;/server 127.0.0.1:$upstream;/   or die "no upstream\n";
    $site =~ s{ssl_certificate\s+\S+;}{ssl_certificate $dir/cert.pem;}  or die "no certificate\n";
    $site =~ s{ssl_certificate_key\s+\S+;}{ssl_certificate_key $dir/key.pem;} or die "no key\n";
    my $conf = "$dir/nginx-$port.conf";
    open(my $fh, '>', $conf) or die "Can't write $conf: $!\n";
    print {$fh} "daemon off;\nworker_processes $opt{nginx_workers};\npid $dir/nginx.pid;\n"
        . "error_log $dir/nginx-error.log;\nevents { worker_connections 1024; }\n"
        . "http { access_log off; client_body_temp_path $dir/body; proxy_temp_path $dir/proxy;\n"
        . "fastcgi_temp_path $dir/fcgi; uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;\n"
        . "$site\n}\n";
    close $fh;
    $$pid = spawn("$dir/nginx.out", '/usr/sbin/nginx', '-c', $conf, '-p', $dir);
    _wait_tls($port);
    return $port;
}

# Starman terminating TLS itself
sub _starman ($pid) {
    my $port = _free_port();
    $$pid = {
        name => 'starman',
        pid  => spawn(
            "$dir/starman.out", 'starman',             '--workers',    $opt{workers},
            '--listen',         "127.0.0.1:$port:ssl", '--enable-ssl', '--ssl-cert',
            "$dir/cert.pem",    '--ssl-key',           "$dir/key.pem", '-E',
            'deployment',       $app
        ),
        stop_wait => 15
    };
    _wait_tls($port);
    return $port;
}

sub _wait_tls ($port) {
    my $until = Time::HiRes::time() + 30;
    while (Time::HiRes::time() < $until) {
        return
            if IO::Socket::SSL->new(
            PeerHost        => '127.0.0.1',
            PeerPort        => $port,
            SSL_verify_mode => SSL_VERIFY_NONE
            );
        Time::HiRes::sleep(0.1);
    }
    die "nothing answers TLS on port $port\n";
}

sub _free_port () {
    my $sock = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1) or die;
    return $sock->sockport;
}
