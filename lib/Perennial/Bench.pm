package Perennial::Bench;
use v5.36;
use Carp           qw(croak);
use Cwd            qw(abs_path);
use Fcntl          qw(F_GETFD F_SETFD FD_CLOEXEC);
use File::Basename qw(dirname);
use File::Temp     qw(tempdir);
use HTTP::Tiny;
use IO::Socket::IP;
use List::Util             qw(min);
use POSIX                  qw(WNOHANG);
use Time::HiRes            ();
use Perennial::Bench::Load qw(loopback run_load);

# perennial bench: for each combination of the varied settings, start Perennial with it on a
# port of its own, warm it up, measure each URL at each concurrency with ab or wrk, stop it.
# With targets (other servers, already running) the same measurements run against each one.

my $MAX_SECONDS = 120;    # A measurement by requests stops after this at the latest
my $BIN         = abs_path(dirname(__FILE__) . '/../../bin/perennial');
my $LIB         = abs_path(dirname(__FILE__) . '/..');

sub new ($class, %args) {
    my $spec = $args{spec} or croak 'spec is required';
    die "Bench: give the spec a Config file, or --target URLs\n"
        unless defined $spec->config || @{$args{targets} // []};
    return bless {
        spec     => $spec,
        targets  => $args{targets} // [],
        progress => $args{progress},
        done     => 0
    }, $class;
}

# [{settings => [[Directive, value]...], target, url, concurrency, rps, avg_ms, ...}]
sub run ($self) {
    my $spec = $self->{spec};
    my @plan
        = @{$self->{targets}}
        ? map { [undef, $_] } @{$self->{targets}}
        : map { [$_, undef] } $spec->combinations;
    $self->{total} = @plan * $spec->urls * $spec->concurrency;
    my @results;
    for my $step (@plan) {
        my ($combo, $target) = @$step;
        my $server = $target ? undef          : $self->start($combo);
        my $base   = $target ? $target->{url} : "http://127.0.0.1:$server->{port}";
        _answers($target, $base, $spec) if $target;
        my $ok = eval {
            push @results, $self->_measure($combo // [], $target, $base);
            1;
        };
        my $err = $@;
        $self->stop($server) if $server;
        die $err unless $ok;
    }
    $self->_progress(undef);
    return \@results;
}

# Perennial with the spec's config, its fixed settings and this combination, on a socket this
# process binds (no race for the port), logging to a directory of its own
sub start ($self, $combo) {
    my $spec = $self->{spec};
    my $dir  = tempdir(CLEANUP => 1);
    my $sock = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 511)
        or die "Can't listen on 127.0.0.1: $@\n";
    my @set = map { ('--set', "$_->[0] $_->[1]") } $spec->fixed, @$combo;
    my @cmd = (
        $^X,            "-I$LIB",             $BIN,          'serve',
        '-c',           $spec->config,        '--listen',    'fd:' . fileno($sock),
        '--pid',        "$dir/perennial.pid", '--error-log', "$dir/error.log",
        '--access-log', "$dir/access.log",    @set
    );
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        setpgrp(0, 0);
        fcntl($sock, F_SETFD, fcntl($sock, F_GETFD, 0) & ~FD_CLOEXEC);
        open(STDOUT, '>',  "$dir/out.log") or POSIX::_exit(126);
        open(STDERR, '>&', \*STDOUT)       or POSIX::_exit(126);
        exec @cmd or POSIX::_exit(127);
    }
    my $server = {pid => $pid, port => $sock->sockport, dir => $dir};
    close $sock;
    my ($first)  = $spec->urls;
    my $ua       = HTTP::Tiny->new(timeout => 5);
    my $deadline = Time::HiRes::time() + 30;
    while (Time::HiRes::time() < $deadline) {
        last           if waitpid($pid, WNOHANG) == $pid;
        return $server if $ua->get("http://127.0.0.1:$server->{port}$first")->{status} < 599;
        Time::HiRes::sleep(0.1);
    }
    my $why = _slurp("$dir/out.log") . _slurp("$dir/error.log");
    $self->stop($server);
    die "Perennial did not start with " . join(', ', map {"$_->[0] $_->[1]"} @$combo) . ":\n$why";
}

sub stop ($self, $server) {
    kill 'TERM', $server->{pid};
    my $deadline = Time::HiRes::time() + 20;
    while (Time::HiRes::time() < $deadline) {
        return if waitpid($server->{pid}, WNOHANG) != 0;    # Gone, or reaped already
        Time::HiRes::sleep(0.05);
    }
    kill 'KILL', -$server->{pid};
    waitpid $server->{pid}, 0;
}

sub _measure ($self, $combo, $target, $base) {
    my $spec = $self->{spec};
    my @rows;
    for my $path ($spec->urls) {
        my $url = loopback($path =~ m{\A/} ? "$base$path" : $path);
        my ($top) = sort { $b <=> $a } $spec->concurrency;
        run_load(
            tool        => 'ab',
            url         => $url,
            concurrency => min($top, $spec->warmup),
            requests    => $spec->warmup,
            seconds     => $MAX_SECONDS
        ) if $spec->warmup;
        for my $c ($spec->concurrency) {
            $self->_progress(
                      join(' ', map {"$_->[0]=$_->[1]"} @$combo)
                    . ($target ? $target->{name} : '')
                    . " c=$c $path");
            my $r = run_load(
                tool        => $spec->tool,
                url         => $url,
                concurrency => $c,
                requests    => $spec->requests // 0,
                seconds     => $spec->requests ? $MAX_SECONDS : $spec->duration,
                timeout     => $spec->timeout,
                keepalive   => $spec->keepalive
            );
            delete $r->{raw};
            push @rows,
                {
                %$r,
                settings    => $combo,
                target      => $target && $target->{name},
                url         => $path,
                concurrency => $c
                };
            $self->{done}++;
        }
    }
    return @rows;
}

# A terminal gets a bar on standard error; anything else gets nothing
sub _progress ($self, $what) {
    my $fh = $self->{progress} or return;
    if (!defined $what) { print {$fh} "\r\e[K"; return }
    my $width  = 30;
    my $filled = int($width * $self->{done} / ($self->{total} || 1));
    printf {$fh} "\r\e[K[%s%s] %d/%d %s", '#' x $filled, '.' x ($width - $filled),
        $self->{done} + 1, $self->{total}, substr($what, 0, 60);
}

# A target that refuses connections would give ab nothing but failures: say so at once
sub _answers ($target, $base, $spec) {
    my ($first) = $spec->urls;
    my $url     = loopback($first =~ m{\A/} ? "$base$first" : $first);
    my $res     = HTTP::Tiny->new(timeout => 10)->get($url);
    die "target $target->{name} does not answer $url: $res->{content}" if $res->{status} == 599;
}

sub _slurp ($file) {
    open(my $fh, '<', $file) or return '';
    local $/;
    return <$fh> // '';
}

1;

__END__

=head1 NAME

Perennial::Bench - measure a server under load over a sweep of settings

=head1 SYNOPSIS

    my $spec    = Perennial::Bench::Spec->load('examples/heavy.bench');
    my $results = Perennial::Bench->new(spec => $spec, progress => \*STDERR)->run;

=head1 DESCRIPTION

For each combination of the spec's C<Vary> settings, starts C<bin/perennial serve> with the
spec's C<Config>, its C<Set> settings and the combination (as C<--set>), on a loopback socket
of its own, with logs in a temporary directory. It warms the server up with C<Warmup>
requests (ab), measures every URL at every concurrency with the spec's tool, and stops the
server before the next combination. With C<targets> the same measurements run against
servers already running (Apache, Starman, another Perennial), without restarts. Every
measurement is bounded in requests and seconds (ab) or in seconds (wrk).

=head1 METHODS

=head2 new

    my $bench = Perennial::Bench->new(spec => $spec, targets => [{name => 'apache', url => $url}],
        progress => $fh_or_undef);

=head2 start, stop

    my $server = $bench->start([[MaxClients => 4]]);    # {pid, port, dir}
    $bench->stop($server);

Starts Perennial with the spec's config and settings plus these, waits until it answers the
first URL (30 s at most), and stops it (TERM, then KILL after 20 s).

=head2 run

    my $results = $bench->run;

One hash per measurement: C<settings>, C<target>, C<url>, C<concurrency>, C<tool>, C<rps>,
C<avg_ms>, C<p50_ms>, C<p90_ms>, C<p99_ms>, C<completed>, C<failed>, C<seconds>.

=cut
