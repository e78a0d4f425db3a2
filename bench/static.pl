#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use File::Temp                qw(tempdir);
use Perennial::Bench::Servers qw(start_server stop_server);
use Perennial::Bench::Wrk     qw(run_wrk);
use Perennial::Bench::Options qw(options);

# Static files: a 1 KB and a 1 MB file from the same directory under Perennial, Apache 2.4
# prefork and nginx, each with the same number of workers, keep-alive on, driven by wrk on
# loopback in one run. Prints requests/s, MB/s and Perennial's ratio to each. Bounded by -d.

my %opt = (workers => 8, connections => 50, duration => 5, servers => 'perennial,apache,nginx');
options(
    \%opt,
    'Usage: perl bench/static.pl [--workers 8] [--connections 50] [--duration 5] '
        . '[--servers perennial,apache,nginx]',
    'workers=i',
    'connections=i',
    'duration=i',
    'servers=s'
);
my $docs = tempdir(CLEANUP => 1);
chmod 0755, $docs;
_write("$docs/hello.txt", "Hello\n");
_write("$docs/1k.bin",    'x' x 1024);
_write("$docs/1m.bin",    'y' x (1024 * 1024));
my @servers = split /,/, $opt{servers};
my %result;

for my $name (@servers) {
    my $srv = start_server(
        "$name-static",
        docs    => $docs,
        workers => $opt{workers},
        probe   => '/hello.txt'
    );
    for my $file (qw(1k.bin 1m.bin)) {
        my %load = (port => $srv->{port}, connections => $opt{connections}, path => "/$file");
        run_wrk(%load, duration => 1);
        my $r = run_wrk(%load, duration => $opt{duration});
        $result{$name}{$file} = $r;
        printf STDERR "%-10s %-7s %9.0f req/s\n", $name, $file, $r->{rps};
    }
    stop_server($srv);
}
say '';
say
    "static files, $opt{workers} workers each, keep-alive, wrk -t2 -c$opt{connections} -d$opt{duration}s on 127.0.0.1";
say sprintf '%-10s %-7s %10s %10s %10s %8s', 'server', 'file', 'req/s', 'MB/s', 'p99 ms', 'errors';
for my $name (@servers) {
    for my $file (qw(1k.bin 1m.bin)) {
        my $r    = $result{$name}{$file};
        my $size = $file eq '1k.bin' ? 1024 : 1024 * 1024;
        say sprintf '%-10s %-7s %10.0f %10.1f %10.2f %8d', $name, $file, $r->{rps},
            $r->{rps} * $size / 1e6, @$r{qw(p99_ms errors)};
    }
}
say '';
for my $other (grep { $_ ne 'perennial' } @servers) {
    for my $file (qw(1k.bin 1m.bin)) {
        my ($p, $o) = map { $result{$_}{$file}{rps} } 'perennial', $other;
        say sprintf 'perennial / %-7s %-7s %5.2fx', $other, $file, $o ? $p / $o : 0;
    }
}

sub _write ($file, $text) {
    open(my $fh, '>', $file) or die "Can't write $file: $!\n";
    print {$fh} $text;
    close $fh;
    chmod 0644, $file;
}
