package Perennial::CLI::Help;
use v5.36;
use File::Basename qw(dirname);
use Pod::Text      ();

# perennial help [TOPIC], and each tool's --help: the manuals shipped with the modules, shown
# without perldoc (a fresh Debian has perl but not perl-doc), and the options of bench, tune
# and doctor.

# The manuals: topic => [module, what it is about]
my %MANUAL = (
    apache => ['Perennial::Manual::Apache', 'an Apache 2.4 + mod_perl configuration, read as is'],
    config => ['Perennial::Config',         'every directive and setting'],
    deployment => [
        'Perennial::Manual::Deployment',
        'the Debian package, systemd, TLS in front, several hosts'
    ],
    scripts => ['Perennial::Manual::Scripts', 'CGI scripts resident; the doctor; each pitfall'],
    status  => ['Perennial::Manual::Status',  'server-status, perl-status, the scoreboard'],
    tuning  => ['Perennial::Manual::Tuning',  'perennial bench and perennial tune'],
    workers =>
        ['Perennial::Manual::WorkerLife', 'preloading, memory limits, deadlines, idle clients'],
);

# Each tool's own usage and options
my %TOOL = (
    bench => <<'TEXT',
Usage: perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR] [--quiet]

Runs the benchmark a spec file describes (URLs, concurrency, requests, the settings to vary)
against Perennial and the targets given, and prints one table of requests/s, latency and
memory per setting.

  --target [NAME=]URL   another server to measure beside Perennial; repeatable
  --out DIR             where the results go (default: logs/bench-DATE)
  -q, --quiet           no progress bar
  -h, --help            this text

The spec file's directives: perennial help tuning
TEXT
    tune => <<'TEXT',
Usage: perennial tune -c perennial.conf (--url PATH ... | --from-log ACCESS_LOG)
                      [--ram SIZE] [--shared] [--out FILE]

Measures the site's own requests and writes the worker settings that fit this machine
(MaxClients, MinSpareServers, MaxSpareServers, MaxRequestsPerChild, MaxUnsharedSize).

  -c, --config FILE     the site's configuration
  --url PATH            a URL to measure; repeatable
  --from-log FILE       take the busiest URLs of an access log instead (--top N, default 5)
  --ram SIZE            the memory budget (400M, 2G; default: all of the machine's memory)
  --shared              a machine shared with other work: count what is available now
  --workers N           workers to measure with (default 4)
  --requests N          requests to measure with (default 1000), --concurrency N at once (16)
  --sweep 'N N ...'     MaxClients values for a short bench sweep
  --out FILE            where the settings go (default: logs/tune.conf)
  -q, --quiet           no progress bar
  -h, --help            this text

How it decides: perennial help tuning
TEXT
    doctor => <<'TEXT',
Usage: perennial doctor [--mode registry|perlrun|cgi] [OPTIONS] DIR|SCRIPT ...
       perennial doctor -c perennial.conf [OPTIONS] [DIR|SCRIPT ...]

Which CGI scripts are safe to keep resident, and in which mode: each pitfall with its line,
what it will do, the evidence and the fix. Exit status 1 when a script is unsafe where it is
served, 2 for a usage error.

  --mode MODE           judge the scripts given in this mode (default: registry)
  -c, --config FILE     the scripts a configuration serves, each in the modes it is served in
  --run                 also run each Registry script twice in a scratch interpreter (it does
                        what the script does: use a copy or a staging machine)
  --log ERROR_LOG       also read what a running server's workers said of the scripts
  --json                JSON instead of a table
  --timeout SECONDS     how long one script's examination or run may take (default: 30)
  -h, --help            this text

Every pitfall, and the fix: perennial help scripts
TEXT
);

sub tool ($name) { $TOOL{$name} // die "no help for $name\n" }

# The list of topics, for perennial help
sub topics () {
    return join '', "Manuals (perennial help TOPIC):\n",
        map { sprintf "  %-11s %s\n", $_, $MANUAL{$_}[1] } sort keys %MANUAL;
}

# A manual as text; undef for a topic there is none of
sub manual ($topic) {
    my $entry = $MANUAL{lc $topic} or return;
    my $file  = _file($entry->[0]) // return;
    my $text  = '';
    my $pod   = Pod::Text->new(width => 78, indent => 4, sentence => 0);
    $pod->output_string(\$text);
    $pod->parse_file($file);
    return $text;
}

# The module's file, beside this one (as installed) or through @INC
sub _file ($module) {
    my $top = dirname(dirname(__FILE__));    # .../Perennial
    (my $rel = $module) =~ s{\APerennial::}{};
    $rel =~ s{::}{/}g;
    for my $file ("$top/$rel.pod", "$top/$rel.pm") { return $file if -f $file }
    return;
}

1;

__END__

=head1 NAME

Perennial::CLI::Help - perennial help TOPIC, and the tools' --help

=head1 SYNOPSIS

    print Perennial::CLI::Help::manual('scripts');    # the manual, as text
    print Perennial::CLI::Help::topics();
    print Perennial::CLI::Help::tool('doctor');        # perennial doctor --help

=head1 DESCRIPTION

Shows the manuals installed with the modules as text (L<Pod::Text>, part of perl), so that
C<perennial help scripts> works where C<perldoc> is not installed, and holds the usage and
options of C<perennial bench>, C<tune> and C<doctor>.

=cut
