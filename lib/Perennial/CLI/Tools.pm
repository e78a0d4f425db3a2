package Perennial::CLI::Tools;
use v5.36;
use Cwd          ();
use File::Path   qw(make_path);
use File::Spec   ();
use Getopt::Long qw(GetOptionsFromArray);
use POSIX        qw(strftime);
use Perennial::Bench;
use Perennial::Config;
use Perennial::Doctor;
use Perennial::CLI::Help;
use Perennial::Doctor::Log;
use Perennial::Doctor::Report;
use Perennial::Doctor::Sites;
use Perennial::Bench::Chart  qw(svg);
use Perennial::Bench::Report qw(csv json knee series table);
use Perennial::Bench::Spec;
use Perennial::Tune;
use Perennial::Tune::Text;

# perennial bench and perennial tune: their options, and where their results go

sub bench (@argv) {
    my %opt;
    GetOptionsFromArray(\@argv, \%opt, 'target=s@', 'out=s', 'quiet|q', 'help|h') or return 2;
    return _help('bench') if $opt{help};
    my $file = shift @argv;
    die "Usage: perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR]\n"
        if !defined $file || @argv;
    my $spec    = Perennial::Bench::Spec->load($file);
    my @targets = map { _target($_) } @{$opt{target} // []};
    my $bench   = Perennial::Bench->new(
        spec     => $spec,
        targets  => \@targets,
        progress => _bar(\%opt)
    );
    my $results = $bench->run;
    my $out     = $opt{out} // 'logs/bench-' . strftime('%Y%m%d-%H%M%S', localtime);
    my @files   = write_results($out, $spec, $results);
    print $spec->title ? $spec->title . "\n\n" : '';
    print table($results, fixed_settings($spec));
    printf "\nMeasured with %s. Results: %s\n", $results->[0]{tool} // $spec->tool,
        join(', ', @files);
    return 0;
}

# perennial doctor: 0 when every script is safe in its mode, 1 when one is not, 2 for usage
sub doctor (@argv) {
    my %opt;
    GetOptionsFromArray(\@argv, \%opt, 'mode=s', 'json', 'timeout=i', 'config|c=s', 'run', 'log=s',
        'help|h')
        or return _doctor_usage();
    return _help('doctor') if $opt{help};
    my $mode = $opt{mode} // 'registry';
    return _doctor_usage("no such mode: $mode")
        unless grep { $_ eq $mode } Perennial::Doctor::Findings::modes();
    return _doctor_usage('--mode and -c: the configuration says each script\'s mode')
        if defined $opt{mode} && defined $opt{config};
    return _doctor_usage('--timeout is a number of seconds, at least 1')
        if defined $opt{timeout} && $opt{timeout} < 1;
    return _doctor_usage()                            if !@argv && !defined $opt{config};
    local $Perennial::Doctor::SECONDS = $opt{timeout} if $opt{timeout};

    my %with    = (run => $opt{run});
    my @scripts = _doctor_scripts(\%opt, \%with, $mode, @argv) or return 2;
    my @results = Perennial::Doctor::report(\%with, @scripts);
    print $opt{json}
        ? Perennial::Doctor::Report::json(\@results)
        : Perennial::Doctor::Report::table(\@results);
    return (grep { Perennial::Doctor::Report::any_unsafe($_) } @results) ? 1 : 0;
}

sub _help ($tool) {
    print Perennial::CLI::Help::tool($tool);
    return 0;
}

# What to examine, and the log to read: a mistake there is the caller's (2), not a finding
sub _doctor_scripts ($opt, $with, $mode, @argv) {
    my @scripts = eval {
        $with->{log} = Perennial::Doctor::Log::read_file($opt->{log}) if defined $opt->{log};
        defined $opt->{config}
            ? _configured($opt->{config}, @argv)
            : map { {script => $_, served => [{mode => $mode}]} } Perennial::Doctor::scripts(@argv);
    };
    print STDERR "perennial doctor: ", $@ || "nothing to examine\n" unless @scripts;
    return @scripts;
}

sub _doctor_usage ($why = undef) {
    print STDERR "perennial doctor: $why\n" if defined $why;
    print STDERR "Usage: perennial doctor [--mode registry|perlrun|cgi] [OPTIONS] DIR|SCRIPT ...\n"
        . "       perennial doctor -c perennial.conf [OPTIONS] [DIR|SCRIPT ...]\n"
        . "Options: --run (run each script too), --log ERROR_LOG, --json, --timeout SECONDS\n";
    return 2;
}

# The scripts a configuration serves (below the paths given, if any), each with its modes
sub _configured ($file, @paths) {
    my $config  = Perennial::Config->load(file => $file);
    my @scripts = Perennial::Doctor::Sites->scripts($config);
    die "$file serves no scripts (no Alias, ScriptAlias or DocumentRoot leads to one)\n"
        unless @scripts;
    return @scripts unless @paths;
    my @under = map { Cwd::realpath($_) // die "No such script or directory: \"$_\"\n" } @paths;
    return grep {
        my $s = $_->{script};
        grep { $s eq $_ || index($s, "$_/") == 0 } @under
    } @scripts;
}

sub tune (@argv) {
    my %opt;
    GetOptionsFromArray(
        \@argv,       \%opt,        'config|c=s',    'url=s@',
        'from-log=s', 'top=i',      'ram=s',         'shared',
        'workers=i',  'requests=i', 'concurrency=i', 'sweep=s',
        'out=s',      'quiet|q',    'help|h'
    ) or return 2;
    return _help('tune') if $opt{help};
    die "Usage: perennial tune -c CONFIG (--url PATH ... | --from-log ACCESS_LOG) [--ram SIZE] "
        . "[--shared] [--out FILE]\n"
        if !defined $opt{config} || @argv;
    die "Can't read config \"$opt{config}\"\n" unless -r $opt{config};
    my @urls = @{$opt{url} // []};
    push @urls, top_urls($opt{'from-log'}, $opt{top} // 5) if defined $opt{'from-log'};
    die "tune needs the URLs to request: --url PATH (repeatable) or --from-log ACCESS_LOG\n"
        unless @urls;
    my $tune = Perennial::Tune->new(
        config      => File::Spec->rel2abs($opt{config}),
        urls        => \@urls,
        ram_kb      => defined $opt{ram} ? _kb($opt{ram}) : undef,
        shared      => $opt{shared},
        workers     => $opt{workers},
        requests    => $opt{requests},
        concurrency => $opt{concurrency},
        sweep       => $opt{sweep} ? [split /[\s,]+/, $opt{sweep}] : undef,
        progress    => _bar(\%opt),
    );
    my $r    = $tune->run;
    my $out  = $opt{out} // 'logs/tune.conf';
    my $conf = Perennial::Tune::Text::fragment($r, \@urls);
    make_path((File::Spec->splitpath(File::Spec->rel2abs($out)))[1]);
    open(my $fh, '>', $out) or die "Can't write $out: $!\n";
    print {$fh} $conf;
    close $fh or die "Can't write $out: $!\n";
    print Perennial::Tune::Text::report($r, \@urls), "\n", $conf;
    print "\nWritten to $out: add 'Include " . File::Spec->rel2abs($out) . "' to your config.\n";
    return 0;
}

# The most requested GET paths of an access log (combined format)
sub top_urls ($log, $n) {
    open(my $fh, '<', $log) or die "Can't read access log \"$log\": $!\n";
    my %count;
    while (my $line = <$fh>) {
        $count{$1}++ if $line =~ m{"GET (/\S*) HTTP/1\.[01]" [23]\d\d };
    }
    my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. $n - 1];
    return grep {defined} @top;
}

sub _kb ($size) {
    my $kb = Perennial::Config::kilobytes($size);
    die "--ram takes a size such as 400M or 2G, got '$size'\n" unless $kb =~ /\A[1-9]\d*\z/;
    return $kb;
}

# A progress bar for a person at a terminal; none in a pipe, a log or CI
sub _bar ($opt) {
    my $terminal = -t STDERR;    ## no critic (ProhibitInteractiveTest) a terminal, not a prompt
    return !$opt->{quiet} && $terminal ? \*STDERR : undef;
}

# What stayed the same in every measurement, for under the table
sub fixed_settings ($spec) {
    my @c = $spec->concurrency;
    my @u = $spec->urls;
    return [
        $spec->fixed,
        (@c == 1 ? [Concurrency => $c[0]] : ()),
        (   defined $spec->requests
            ? [Requests => $spec->requests]
            : [Duration => $spec->duration . ' s']
        ),
        [Warmup => $spec->warmup],
        (@u == 1 ? [URL => $u[0]] : ()),
    ];
}

# table.txt, results.csv, results.json and a chart per series (chart.svg, chart-2.svg ...)
sub write_results ($dir, $spec, $results) {
    make_path($dir);
    my %files = (
        'table.txt'    => table($results, fixed_settings($spec)),
        'results.csv'  => csv($results),
        'results.json' =>
            json($results, {spec => File::Spec->abs2rel($spec->file), title => $spec->title}),
    );
    my $n = 0;
    for my $s (series($results)) {
        my $knee = knee($s->{points});
        $files{$n++ ? "chart-$n.svg" : 'chart.svg'} = svg($s, knee => $knee, title => $spec->title);
    }
    for my $name (sort keys %files) {
        open(my $fh, '>', "$dir/$name") or die "Can't write $dir/$name: $!\n";
        print {$fh} $files{$name};
        close $fh or die "Can't write $dir/$name: $!\n";
    }
    return map {"$dir/$_"} sort keys %files;
}

sub _target ($text) {
    my ($name, $url) = $text =~ /\A(\w[\w.-]*)=(.+)\z/ ? ($1, $2) : ($text, $text);
    return {name => $name, url => $url =~ s{/+\z}{}r};
}

1;

__END__

=head1 NAME

Perennial::CLI::Tools - the perennial bench and perennial tune commands

=head1 SYNOPSIS

    exit Perennial::CLI::Tools::bench('examples/heavy.bench', '--out', 'logs/heavy');

=head1 FUNCTIONS

=head2 bench

    perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR] [--quiet]

Runs the sweep, prints the table and writes C<table.txt>, C<results.csv>, C<results.json>
and C<chart.svg> (one chart per series) to C<--out> (default C<logs/bench-DATE-TIME>).

=head2 tune

    perennial tune -c CONFIG (--url PATH ... | --from-log ACCESS_LOG [--top N]) [--ram SIZE]
        [--shared] [--workers N] [--requests N] [--concurrency N] [--sweep '1 2 4 8'] [--out FILE]

Measures and prints the report and the recommended settings, and writes them as a config
fragment to C<--out> (default C<logs/tune.conf>) for C<Include>.

=head2 top_urls

    my @paths = top_urls('logs/access.log', 5);

=head2 fixed_settings, write_results

=cut
