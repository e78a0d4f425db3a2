#!/usr/bin/perl
use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib", "$FindBin::RealBin/../lib";
use Cwd                       qw(abs_path);
use Perennial::Bench::Ab      qw(run_in_turn);
use Perennial::Bench::Servers qw(start_server stop_server);
use Perennial::Bench::Options qw(keepalive_modes options);
use Perennial::Bench::Record  qw(record);

# The work a server does per request, as user-space instructions counted by valgrind's
# callgrind: unlike requests per second on a shared machine, the count is the same from one
# run to the next. Each server runs as one worker under callgrind (Apache with -X, Perennial's
# scripts with --workers 0, the PSGI servers, Perennial's included, with a manager and one
# worker, the manager's few instructions counted); the count of a run that serves N sequential
# requests after a warm-up, less that of a run that only warms up, is the N requests' work:
# with KeepAlive off a new connection each (ab), with it on all on one (wrk's one client, HTTP/1.1:
# ab -k's HTTP/1.0 keep-alive is not kept by every server).
# System calls and the kernel's work are not in it: see `strace -c` for those
# (docs/design-notes.md). --preload CGI: the script servers load CGI.pm at start (PerlModule),
# as a tuned site does; under Perennial it then works through the request object, as under
# mod_perl, where a CGI.pm the script loads reads the CGI environment. --access-log: Apache and
# Perennial keep a combined access log, as a site does (the other PSGI servers keep none).
# --site: Apache and Perennial serve from inside a <VirtualHost> with its own DocumentRoot and
# access log, as most sites that move from Apache have them. --what handler: mod_perl handler
# modules under Apache's mod_perl and Perennial's, as a site's own modules run: the hello
# (bench/apps/hello_handler.pl: content_type, print, OK), and one that uses its tables as most
# handlers do (bench/apps/tables_handler.pl: args, a request header, headers_out).

my %opt = (
    requests  => 1000,
    script    => 'hello.pl',
    warm      => 50,
    what      => 'scripts,psgi',
    keepalive => 'off,on'
);
options(
    \%opt,
    'Usage: perl bench/instructions.pl [--script hello.pl] [--requests 1000] [--warm 50] '
        . '[--what scripts,handler,psgi] [--keepalive off,on] [--preload CGI] [--access-log] [--site] [--record FILE]',
    'requests=i',
    'preload=s',
    'script=s',
    'warm=i',
    'what=s',
    'keepalive=s',
    'access_log|access-log',
    'site',
    'record=s'
);
my @modes   = keepalive_modes($opt{keepalive});
my $scripts = abs_path("$FindBin::RealBin/../examples/cgi-bin");
my $hello   = abs_path("$FindBin::RealBin/apps/hello.psgi");
my %rows    = (    # label, server, URL, the row it is compared with
    scripts => [
        [   'Apache ModPerl::Registry', 'apache', "/registry/$opt{script}",
            'Apache ModPerl::Registry'
        ],
        [   'Perennial Registry',     'perennial-scripts',
            "/registry/$opt{script}", 'Apache ModPerl::Registry'
        ],
        ['Apache ModPerl::PerlRun', 'apache', "/perlrun/$opt{script}", 'Apache ModPerl::PerlRun'],
        [   'Perennial PerlRun',     'perennial-scripts',
            "/perlrun/$opt{script}", 'Apache ModPerl::PerlRun'
        ],
    ],
    handler => [    # Mod_perl handler modules (bench/apps/*_handler.pl): the hello at
                    # /handler, and one that reads the query and a header and sets one
        ['Apache mod_perl handler',    'apache',            '/handler', 'Apache mod_perl handler'],
        ['Perennial mod_perl handler', 'perennial-scripts', '/handler', 'Apache mod_perl handler'],
        [   'Apache handler, tables',     'apache',
            '/handler/tables?name=bench', 'Apache handler, tables'
        ],
        [   'Perennial handler, tables',  'perennial-scripts',
            '/handler/tables?name=bench', 'Apache handler, tables'
        ],
    ],
    psgi => [
        ['uWSGI hello.psgi',     'uwsgi',     '/', 'uWSGI hello.psgi'],
        ['Starlet hello.psgi',   'starlet',   '/', 'uWSGI hello.psgi'],
        ['Starman hello.psgi',   'starman',   '/', 'uWSGI hello.psgi'],
        ['Perennial hello.psgi', 'perennial', '/', 'uWSGI hello.psgi'],
    ],
);
my @rows = map { @{$rows{$_} // die "--what: '$_' is not scripts, handler or psgi\n"} } split /,/,
    $opt{what};
my %count;
for my $ka (@modes) {
    for my $row (@rows) {
        my ($label, $server, $url) = @$row;
        $count{$ka}{$label} = _count($server, $url, $ka);
        printf STDERR "%-26s keep-alive %-3s %10s instructions per request\n", $label,
            $ka ? 'on' : 'off', _shown($count{$ka}{$label});
    }
}
for my $ka (@modes) {
    say '';
    say "user-space instructions per request (callgrind, one worker, "
        . "$opt{requests} sequential requests after $opt{warm} to warm up, KeepAlive "
        . ($ka              ? 'on'                                                        : 'off')
        . ($opt{preload}    ? ", $opt{preload} loaded at start"                           : '')
        . ($opt{access_log} ? ', Apache and Perennial keep an access log'                 : '')
        . ($opt{site} ? ', Apache and Perennial serve a <VirtualHost> with an access log' : '')
        . ')';
    say sprintf '%-26s %14s %10s', 'server / mode', 'instructions', 'x base';
    for my $row (@rows) {
        my ($label, $base) = @$row[0, 3];
        my $count = $count{$ka};
        say sprintf '%-26s %14s %10s', $label, _shown($count->{$label}),
            $count->{$label} && $count->{$base}
            ? sprintf('%.2f', $count->{$label} / $count->{$base})
            : '-';
    }
}
record(
    $opt{record},
    'instructions',
    {   script => $opt{script},
        map {
            my $c = $count{$_};
            (($_ ? 'on' : 'off') => {map { ($_ => $c->{$_}) } grep { defined $c->{$_} } keys %$c})
        } @modes
    }
);

# A count, or why there is none
sub _shown ($count) { defined $count ? sprintf('%.0f', $count) : 'not counted' }

# Instructions per request of one server: two runs under callgrind, one that only warms up
# and one that then serves N requests more; the difference is the N requests. (Zeroing the
# counters of a running server through vgdb fails once Apache has become www-data.)
sub _count ($server, $path, $ka) {
    my $warm = _whole_run($server, $path, $ka, 0)              // return;
    my $full = _whole_run($server, $path, $ka, $opt{requests}) // return;
    return ($full - $warm) / $opt{requests};
}

# A server that had to be killed at its stop (under callgrind, a worker sometimes does not end
# within a minute of TERM) left no total for that process, and the difference of two runs would
# be a wrong, even negative, count: such a run is made again, three times at most
sub _whole_run ($server, $path, $ka, $requests) {
    for my $try (1 .. 3) {
        my $total = _run($server, $path, $ka, $requests);
        return $total if defined $total;
        warn "$server: run $try was killed at its stop; its count is not used\n";
    }
    return;
}

# The instructions of a whole server's life: start, warm-up, N requests, stop (undef: it was
# killed at its stop)
sub _run ($server, $path, $ka, $requests) {
    my $srv = start_server(
        $server,
        workers    => $server eq 'perennial-scripts' ? 0 : 1,  # Apache wants 1, and -X makes it one
        single     => 1,
        keepalive  => $ka,
        scripts    => $scripts,
        preload    => $opt{preload},
        access_log => $opt{access_log},
        site       => $opt{site},
        app        => $hello,
        probe      => $path,
        timeout    => 180,
        stop_wait  => 60,    # Under callgrind, an exit with a big heap can take long
        prefix     => ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null'],
    );
    my %load = (port => $srv->{port}, path => $path, keepalive => $ka);
    run_in_turn(%load, requests => $opt{warm}, seconds => 120);
    if ($requests) {
        my $r = run_in_turn(%load, requests => $requests, seconds => 600);
        die "$server: $r->{failed} failed requests\n" if $r->{failed};
    }
    stop_server($srv)                         or return;
    open(my $log, '<', "$srv->{dir}/out.log") or die "Can't read the log of $server: $!\n";

    # Every process's total: a manager and its worker (none: the server's last words say why)
    my @lines  = <$log>;
    my @totals = map { /I\s+refs:\s+([\d,]+)/ ? $1 =~ tr/,//dr : () } @lines;
    die "$server: valgrind reported no total; the end of its output:\n",
        @lines[($#lines > 20 ? $#lines - 20 : 0) .. $#lines]
        unless @totals;
    my $sum = 0;
    $sum += $_ for @totals;
    return $sum;
}
