package Perennial::Bench::ScriptFloor;
use v5.36;
use Exporter   qw(import);
use IPC::Open2 qw(open2);

# The floor under a Registry worker's memory: a plain perl that loads what the servers preload,
# forks its workers, and has each compile the scripts as Registry does (the file's text as a
# sub in a package of its own, at the script's first request) and run them with CGI.pm's reset
# before each, STDOUT on a string, the CGI variables in %ENV. No server, no HTTP: what is left
# is what the scripts and CGI.pm cost a forked worker by themselves, so that the servers'
# figures beside it say what is theirs.
#
# floor_start runs it as a process of its own (its children are the workers, as a server's are);
# the caller reads their memory from /proc between the calls.

our @EXPORT_OK = qw(floor_start floor_serve floor_stop);

sub floor_start (%arg) {
    my @cmd = (
        $^X,
        '-I',
        __FILE__ =~ s{/Perennial/Bench/ScriptFloor\.pm\z}{}r,
        '-MPerennial::Bench::ScriptFloor',
        '-e',
        'Perennial::Bench::ScriptFloor::main(@ARGV)',
        $arg{dir},
        $arg{workers},
        $arg{preload} // '',
        @{$arg{scripts} // []}
    );
    my $pid  = open2(my $out, my $in, @cmd);
    my $line = <$out> // die "the floor's perl did not start\n";
    die "the floor's perl: $line" unless $line eq "ready\n";
    return {pid => $pid, in => $in, out => $out};
}

# Runs $count requests of $script, spread over the workers; returns how many failed
sub floor_serve ($floor, $script, $count) {
    print {$floor->{in}} "$script $count\n";
    $floor->{in}->flush;
    my $line = readline $floor->{out} // die "the floor's perl ended\n";
    return $line =~ /\Afailed (\d+)\n\z/ ? $1 : die "the floor's perl: $line";
}

sub floor_stop ($floor) {
    close $floor->{in};
    waitpid $floor->{pid}, 0;
    return;
}

# The floor's own process: loads the preload (and compiles @scripts, when given, as
# ModPerl::RegistryLoader would), forks the workers, then hands each line's requests out to them
sub main ($dir, $workers, $preload, @scripts) {
    if ($preload) {
        eval "require $preload; 1" or die "can't load $preload: $@";    ## no critic (StringyEval)
    }
    require PerlIO::scalar;                                             # Both servers have it
    my %handler;
    $handler{$_} = _compile("$dir/$_", scalar keys %handler) for @scripts;
    my @kids = map { _fork_worker($dir, \%handler) } 1 .. $workers;
    STDOUT->autoflush(1);
    print "ready\n";
    while (my $line = <STDIN>) {
        my ($script, $count) = $line =~ /\A(\S+) (\d+)\n\z/ or die "floor: bad line '$line'\n";
        my @share = map { int($count / @kids) + ($_ < $count % @kids ? 1 : 0) } 0 .. $#kids;
        print {$kids[$_]{to}} "$script $share[$_]\n" for 0 .. $#kids;
        my $failed = 0;
        for my $kid (@kids) {
            my $answer = readline $kid->{from} // die "floor: a worker ended\n";
            $failed += $answer =~ /\Afailed (\d+)/ ? $1 : die "floor: $answer";
        }
        print "failed $failed\n";
    }
    close $_->{to} for @kids;
    waitpid $_->{pid}, 0 for @kids;
    exit 0;
}

sub _fork_worker ($dir, $handler) {
    pipe(my $from_parent, my $to_kid)    or die "pipe: $!";
    pipe(my $from_kid,    my $to_parent) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if ($pid) {
        close $_ for $from_parent, $to_parent;
        $to_kid->autoflush(1);
        return {pid => $pid, to => $to_kid, from => $from_kid};
    }
    close $_ for $to_kid, $from_kid;
    $to_parent->autoflush(1);
    open(STDERR, '>', '/dev/null') or die "STDERR: $!";    # The scripts' warnings, as an error log
    chdir $dir or die "chdir $dir: $!";    # As Perennial's Registry runs a script in its directory
    my $failed;
    while (my $line = <$from_parent>) {
        my ($script, $count) = $line =~ /\A(\S+) (\d+)\n\z/ or last;
        $failed = 0;
        $failed += _request($dir, $script, $handler) ? 0 : 1 for 1 .. $count;
        print {$to_parent} "failed $failed\n";
    }
    exit 0;
}

# One request: the script compiled at its first, CGI.pm's reset, the CGI variables, STDOUT on a
# string; true when it printed a head
sub _request ($dir, $script, $handler) {
    my $code = $handler->{$script} //= _compile("$dir/$script", scalar keys %$handler);
    CGI::initialize_globals() if defined &CGI::initialize_globals;
    local %ENV = (
        %ENV,
        GATEWAY_INTERFACE => 'CGI/1.1',
        REQUEST_METHOD    => 'GET',
        QUERY_STRING      => '',
        SCRIPT_NAME       => "/registry/$script",
        SCRIPT_FILENAME   => "$dir/$script",
        SERVER_NAME       => '127.0.0.1',
        SERVER_PORT       => '8529',
        SERVER_PROTOCOL   => 'HTTP/1.0',
        REMOTE_ADDR       => '127.0.0.1',
        HTTP_HOST         => '127.0.0.1:8529',
    );
    local *STDOUT;
    open(STDOUT, '>', \my $out) or die "STDOUT on a string: $!";
    my $ok = eval { $code->(); 1 };
    close STDOUT;
    return $ok && defined $out && $out =~ /\AContent-Type:/i;
}

sub _compile ($file, $n) {
    open(my $fh, '<', $file) or die "floor: can't read $file: $!\n";
    my $text = do { local $/; <$fh> };
    return _clean_eval("package Floor::Script$n; sub {\n#line 1 \"$file\"\n$text\n}")
        // die "floor: $file: $@";
}

# A script's text compiled without this file's pragmas (strict, warnings, v5.36's features)
{
    no strict;
    no warnings;
    no feature ':all';
    use feature ':default';
    sub _clean_eval { return eval $_[0] }    ## no critic (StringyEval RequireArgUnpacking)
}

1;
