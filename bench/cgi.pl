#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Cwd                       qw(abs_path);
use List::Util                ();
use Perennial::Bench::Ab      qw(run_ab);
use Perennial::Bench::Servers qw(group_cpu settle start_server stop_server);
use Perennial::Bench::Wrk     qw(run_wrk);
use Perennial::Bench::Options qw(keepalive_modes options);
use Perennial::Bench::Record  qw(record);

# The seed talk's comparison: hello.pl (CGI.pm) under Perennial's CGI, PerlRun and Registry,
# Apache 2.4 prefork's mod_cgi, ModPerl::PerlRun and ModPerl::Registry, and Starman with
# Plack::App::CGIBin, with the same number of workers, KeepAlive off and then on, measured in
# one run with ab -c1 and wrk -c50, each as a ratio to mod_cgi. On a shared two-core machine
# one pass in a fixed order swings by a third between runs, so the servers take turns: every
# round measures each of them once, and the table gives each one's median. Every load is
# bounded in time. --record FILE keeps the medians for bench/goals.pl. --what handler measures a
# mod_perl handler module instead (bench/apps/hello_handler.pl at /handler: content_type,
# print, OK), under Apache's mod_perl and Perennial's, as a site's own modules run.

my %opt = (
    workers   => 16,
    seconds   => 3,
    duration  => 5,
    rounds    => 3,
    script    => 'hello.pl',
    keepalive => 'off,on',
    what      => 'scripts'
);
options(
    \%opt,
    'Usage: perl bench/cgi.pl [--workers 16] [--rounds 3] [--seconds 3 (ab)]'
        . ' [--duration 5 (wrk)] [--script hello.pl] [--keepalive off,on] [--what scripts|handler]'
        . ' [--record FILE]',
    'workers=i',
    'seconds=i',
    'duration=i',
    'rounds=i',
    'script=s',
    'keepalive=s',
    'what=s',
    'record=s'
);
die "--what: '$opt{what}' is not scripts or handler\n"
    unless $opt{what} =~ /\A(?:scripts|handler)\z/;
my @modes   = keepalive_modes($opt{keepalive});
my $scripts = abs_path("$FindBin::RealBin/../examples/cgi-bin");
my $handler = $opt{what} eq 'handler';
my @rows    = $handler
    ? (    # Each row's path is the handler's URL itself
    ['Apache mod_perl handler',    'apache',            '/handler'],
    ['Perennial mod_perl handler', 'perennial-scripts', '/handler'],
    )
    : (
    ['Apache mod_cgi',             'apache',            '/cgi-bin'],
    ['Apache ModPerl::PerlRun',    'apache',            '/perlrun'],
    ['Apache ModPerl::Registry',   'apache',            '/registry'],
    ['Starman Plack::App::CGIBin', 'starman-cgibin',    '/cgi-bin'],
    ['Perennial CGI',              'perennial-scripts', '/cgi-bin'],
    ['Perennial PerlRun',          'perennial-scripts', '/perlrun'],
    ['Perennial Registry',         'perennial-scripts', '/registry'],
    );
my @pairs
    = $handler
    ? (['Perennial mod_perl handler', 'Apache mod_perl handler'])
    : (
    ['Perennial Registry', 'Apache ModPerl::Registry'],
    ['Perennial PerlRun',  'Apache ModPerl::PerlRun'],
    ['Perennial CGI',      'Apache mod_cgi'],
    ['Perennial Registry', 'Starman Plack::App::CGIBin']
    );
my %recorded;

for my $ka (@modes) {
    my $result = _measure($ka);
    _print($ka, $result);
    $recorded{$ka ? 'on' : 'off'} = $result;
}
record(
    $opt{record},
    $handler ? 'handler' : 'cgi',
    {script => $opt{script}, workers => $opt{workers}, %recorded}
);

# Every row's medians with KeepAlive off or on: the servers started for it (Starman's
# Plack::App::CGIBin has no keep-alive to turn on, and stays as it is)
sub _measure ($ka) {
    my @headers = $ka ? () : ('Connection: close');
    my (%servers, %runs);
    for my $row (@rows) {
        my ($label, $server, $prefix) = @$row;
        my $path = _path($prefix);
        my $srv  = $servers{$server} //= start_server(
            $server,
            workers   => $opt{workers},
            scripts   => $scripts,
            probe     => $path,
            keepalive => $ka
        );

        # Every worker warm, and the script compiled in each
        run_ab(port => $srv->{port}, path => $path, seconds => 1, keepalive => $ka);
        run_wrk(
            port        => $srv->{port},
            path        => $path,
            connections => $opt{workers},
            duration    => 2,
            headers     => \@headers
        );
        settle($srv);
    }
    for my $round (1 .. $opt{rounds}) {
        for my $row ($round % 2 ? @rows : reverse @rows) {
            my ($label, $server, $prefix) = @$row;
            my $port = $servers{$server}{port};
            my $path = _path($prefix);
            my $ab
                = run_ab(port => $port, path => $path, seconds => $opt{seconds}, keepalive => $ka);
            settle($servers{$server});
            my @cpu = group_cpu($servers{$server}{pid});
            my $wrk = run_wrk(
                port        => $port,
                path        => $path,
                connections => 50,
                duration    => $opt{duration},
                headers     => \@headers,
                starved     => $ka
            );
            my @used
                = group_cpu($servers{$server}{pid});    # The server's CPU a request, as hello.pl's
            @$wrk{qw(user_us system_us)}
                = map { ($used[$_] - $cpu[$_]) / ($wrk->{completed} || 1) * 1e6 } 0, 1;
            settle($servers{$server});    # Its queue answered before the next row is measured
            push @{$runs{$label}}, {ab => $ab, wrk => $wrk};
            printf STDERR
                "keep-alive %-3s round %d  %-28s ab -c1 %8.1f req/s   wrk -c50 %8.1f req/s\n",
                $ka ? 'on' : 'off', $round, $label, $ab->{rps}, $wrk->{rps};
        }
    }
    stop_server($_) for values %servers;
    return {
        map {
            my $label = $_->[0];
            my $runs  = $runs{$label};
            my @wrk   = sort { $a->{rps} <=> $b->{rps} } map { $_->{wrk} } @$runs;
            (   $label => {
                    ab      => _median(map { $_->{ab}{rps} } @$runs),
                    wrk     => _median(map { $_->{rps} } @wrk),
                    user_us => $wrk[$#wrk / 2]{user_us},                # The median wrk run's
                    sys_us  => $wrk[$#wrk / 2]{system_us},
                    errors  => List::Util::sum(map { $_->{ab}{errors} + $_->{wrk}{errors} } @$runs),
                    starved => List::Util::max(map { $_->{wrk}{starved} // 0 } @$runs),
                }
            )
        } @rows
    };
}

# The URL a row measures: the script under the row's prefix, or the handler's own
sub _path ($prefix) { $handler ? $prefix : "$prefix/$opt{script}" }

sub _print ($ka, $result) {
    my $base = $result->{$rows[0][0]};    # mod_cgi, or Apache's handler
    say '';
    my $what = $handler ? 'the hello handler module' : $opt{script};
    say "$what, $opt{workers} workers each, KeepAlive "
        . ($ka ? 'on (ab -k; Starman: off)' : 'off')
        . ", 127.0.0.1; median of $opt{rounds} rounds of ab -c1 -t$opt{seconds} and wrk -t2 -c50 "
        . "-d$opt{duration}s";
    say sprintf '%-28s %10s %8s %10s %8s %8s %8s %8s %8s', 'server / mode', 'ab -c1', 'x base',
        'wrk -c50', 'x base', 'user us', 'sys us', 'errors', 'starved';
    for my $row (@rows) {
        my $r = $result->{$row->[0]};
        say sprintf '%-28s %10.1f %8.1f %10.1f %8.1f %8.1f %8.1f %8d %8s', $row->[0], $r->{ab},
            _ratio($r->{ab}, $base->{ab}), $r->{wrk}, _ratio($r->{wrk}, $base->{wrk}),
            $r->{user_us} // 0, $r->{sys_us} // 0, $r->{errors}, $ka ? "$r->{starved}/50" : '-';
    }
    say "(starved: the most of wrk's 50 kept-alive connections left without a byte from a "
        . 'third to two thirds into a run, in any round; see bench/hello.pl)'
        if $ka;
    say '(user us, sys us: the CPU time all the server\'s processes used during the median wrk '
        . 'run, in user space and in the kernel, divided by the requests wrk completed)';
    say '';
    for my $pair (@pairs) {
        my ($a, $b) = map { $result->{$_} } @$pair;
        say sprintf '%-20s / %-28s ab %5.2fx   wrk %5.2fx', @$pair,
            _ratio($a->{ab}, $b->{ab}), _ratio($a->{wrk}, $b->{wrk});
    }
}

sub _median (@values) {
    my @sorted = sort { $a <=> $b } @values;
    return 0 unless @sorted;
    return @sorted % 2
        ? $sorted[$#sorted / 2]
        : ($sorted[@sorted / 2 - 1] + $sorted[@sorted / 2]) / 2;
}

sub _ratio ($x, $y) { $y ? $x / $y : 0 }
