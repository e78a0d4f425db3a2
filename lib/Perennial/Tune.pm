package Perennial::Tune;
use v5.36;
use Carp       qw(croak);
use List::Util qw(max min sum);
use POSIX      qw(ceil floor);
use Perennial::Bench;
use Perennial::Bench::Load   qw(run_load);
use Perennial::Bench::Report qw(knee series);
use Perennial::Bench::Spec;
use Perennial::Scoreboard;
use Perennial::Status::Report qw(summary);

# perennial tune: the mod_perl Guide's sizing done by measurement. Run the site under load
# with a few workers, read their memory from smaps before and after, take the machine's memory
# (or a budget), apply the Guide's formula for MaxClients, check it against the CPU with a
# short MaxClients sweep, and derive the spare-server settings, MaxRequestsPerChild and the
# size limits.

sub new ($class, %args) {
    my $self = bless {
        config      => $args{config} // croak('config is required'),
        urls        => $args{urls}   // croak('urls is required'),
        ram_kb      => $args{ram_kb},
        shared      => $args{shared} ? 1 : 0,
        workers     => $args{workers}     // 4,
        requests    => $args{requests}    // 1000,
        sweep       => $args{sweep}       // [1, 2, 4, 8, 16],
        concurrency => $args{concurrency} // 16,
        progress    => $args{progress},
    }, $class;
    croak 'urls must be a non-empty list' unless @{$self->{urls}};
    return $self;
}

# Everything measured and decided: {memory => {...}, ram => {...}, formula => {...},
# sweep => [...], recommend => {...}, reasons => [...]}
sub run ($self) {
    my $memory = $self->_memory;
    my $ram    = $self->_ram;
    my $f      = formula($ram->{kb}, $memory->{max_process_kb}, $memory->{shared_kb});
    my $sweep  = $self->_cpu_sweep($f->{max_clients});
    my $result = {memory => $memory, ram => $ram, formula => $f, sweep => $sweep};
    $result->{recommend} = recommend($result, $self->{shared});
    return $result;
}

# The Guide: MaxClients = (Total_RAM - Max_Process_Size) / (Max_Process_Size - Shared_RAM_per_Child)
sub formula ($ram_kb, $max_kb, $shared_kb) {
    my $unshared = max($max_kb - $shared_kb, 1);
    return {
        ram_kb         => $ram_kb,
        max_process_kb => $max_kb,
        shared_kb      => $shared_kb,
        max_clients    => max(floor(($ram_kb - $max_kb) / $unshared), 0),
        no_sharing     => floor($ram_kb / max($max_kb, 1)),
    };
}

# The settings, each with its reason
sub recommend ($r, $shared_box) {
    my ($f, $m, $sweep) = @$r{qw(formula memory sweep)};
    my @why;
    my $cpu = $sweep->{knee};
    my $max = $f->{max_clients};
    push @why, sprintf 'memory allows %d workers: (%d - %d) / (%d - %d) KB', $max,
        @$f{qw(ram_kb max_process_kb max_process_kb shared_kb)};
    my $largest = max(map { $_->{settings}[0][1] } @{$sweep->{results}});
    if (defined $cpu && $cpu == $largest && $cpu < $max) {
        push @why, "throughput still rose at MaxClients $cpu, the largest value of the sweep: "
            . 'MaxClients stays at what was measured (sweep further with --sweep to see past it)';
        $max = $cpu;
    }
    elsif (defined $cpu && $cpu < $max) {
        push @why, "throughput stops rising at MaxClients $cpu (the sweep's knee): more workers "
            . 'would only queue on the CPU and use memory; MaxClients is the smaller';
        $max = $cpu;
    }
    elsif (defined $cpu) {
        push @why, "the CPU would take MaxClients $cpu (the sweep's knee), more than memory "
            . 'allows: memory decides';
    }
    $max = max($max, 1);
    my %set = (MaxClients => $max);
    if ($shared_box) {
        @set{qw(StartServers MinSpareServers)} = (min($max, max(2, ceil($max / 4))), min($max, 2));
        $set{MaxSpareServers} = max($set{MinSpareServers} + 1, ceil($max / 2));
        push @why,
            'a shared machine: few workers at rest, idle ones given back beyond half of MaxClients';
    }
    else {
        @set{qw(StartServers MinSpareServers MaxSpareServers)} = ($max, ceil($max / 2), $max);
        push @why, 'a dedicated machine: every worker started at once and kept, so a burst never '
            . 'waits for a fork';
    }
    _lifetime(\%set, \@why, $f, $m, $max);
    return {settings => \%set, reasons => \@why};
}

# MaxUnsharedSize: the private memory each worker may reach with MaxClients of them in RAM;
# MaxRequestsPerChild: how many requests at the measured growth it takes to get there
sub _lifetime ($set, $why, $f, $m, $max) {
    my $unshared = $f->{max_process_kb} - $f->{shared_kb};

    # A leak guard: twice today's unshared size and 16 MB more, within each worker's share of RAM
    my $share   = floor(($f->{ram_kb} - $f->{max_process_kb}) / $max);
    my $allowed = max(min($share, 2 * $unshared + 16_384), $unshared + 1024);
    $set->{MaxUnsharedSize} = $allowed;
    push @$why,
        sprintf 'MaxUnsharedSize %d KB: twice the %d KB a worker has to itself now, and 16 MB '
        . 'more, as a guard against leaks (each of %d workers could have %d KB)', $allowed,
        $unshared,
        $max, $share;
    my $growth = $m->{growth_kb_per_request};

    # Memory grows by pages: less than two pages per worker over the run is no growth
    if ($growth * $m->{requests} > 8 * @{$m->{workers}}) {
        my $n = floor(($allowed - $unshared) / $growth);
        $n = $n >= 1000 ? 1000 * floor($n / 1000) : max(100 * floor($n / 100), 100);
        $set->{MaxRequestsPerChild} = min($n, 100_000);
        push @$why,
            sprintf 'MaxRequestsPerChild %d: private memory grew %.2f KB per request, so a '
            . 'worker reaches MaxUnsharedSize after about that many', $set->{MaxRequestsPerChild},
            $growth;
    }
    else {
        $set->{MaxRequestsPerChild} = 10_000;
        push @$why,
            sprintf 'MaxRequestsPerChild 10000: private memory did not grow measurably '
            . '(%.3f KB per request); a high limit recycles now and then, MaxUnsharedSize guards the rest',
            $growth;
    }
}

# The workers' memory after a warm-up and again after the measured requests
sub _memory ($self) {
    my $w    = $self->{workers};
    my $spec = $self->_spec(
        [],
        [   [MaxClients => $w], [StartServers => $w], [MinSpareServers => $w],
            [MaxSpareServers => $w]
        ]
    );
    my $bench = Perennial::Bench->new(spec => $spec);
    my $srv   = $bench->start([]);
    my %m;
    my $ok = eval {
        my $board = Perennial::Scoreboard->attach("$srv->{dir}/perennial.pid.scoreboard");
        $self->_drive($srv, 20 * $w);
        my $before = _workers($board);
        $self->_drive($srv, $self->{requests});
        my $after = _workers($board);
        %m = _growth($before, $after);
        1;
    };
    my $err = $@;
    $bench->stop($srv);
    die $err unless $ok;
    return \%m;
}

sub _growth ($before, $after) {
    my @pids = grep { $before->{$_} } keys %$after;
    die "Can't measure memory: the workers changed during the run\n" unless @pids;
    my $requests = sum(map { $after->{$_}{requests} - $before->{$_}{requests} } @pids) || 1;
    my $grown    = sum(map { $after->{$_}{private} - $before->{$_}{private} } @pids);
    my @now      = map { $after->{$_} } @pids;
    return (
        workers               => [sort { $a->{slot} <=> $b->{slot} } @now],
        before                => [sort { $a->{slot} <=> $b->{slot} } map { $before->{$_} } @pids],
        max_process_kb        => max(map { $_->{rss} } @now),
        shared_kb             => min(map { $_->{shared} } @now),
        private_kb            => max(map { $_->{private} } @now),
        pss_kb                => sum(map { $_->{pss} } @now) / @now,
        requests              => $requests,
        growth_kb_per_request => $grown / $requests,
    );
}

# Each worker's memory and requests, as the status page reads them
sub _workers ($board) {
    return {
        map {
            $_->{pid} => {
                %{$_->{memory}},
                pid      => $_->{pid},
                slot     => $_->{slot},
                requests => $_->{requests}
            }
            }
            grep { $_->{pid} && $_->{memory} } @{summary($board, memory => 1)->{workers}}
    };
}

# Requests spread over the URLs, at the tune's concurrency
sub _drive ($self, $srv, $requests) {
    my @urls = @{$self->{urls}};
    my $each = max(ceil($requests / @urls), 1);
    for my $path (@urls) {
        run_load(
            tool        => 'ab',
            url         => "http://127.0.0.1:$srv->{port}$path",
            concurrency => min($self->{concurrency}, $each),
            requests    => $each,
            seconds     => 120
        );
    }
}

# A short MaxClients sweep, up to what memory allows: where does throughput stop rising?
sub _cpu_sweep ($self, $memory_max) {
    my @values = grep { $_ <= max($memory_max, 1) } @{$self->{sweep}};
    @values = (1) unless @values;
    my $spec    = $self->_spec([[MaxClients => \@values]], []);
    my $results = Perennial::Bench->new(spec => $spec, progress => $self->{progress})->run;
    my ($s)     = series($results);
    my $k       = @values >= 3 ? knee($s->{points}) : undef;
    return {results => $results, knee => defined $k ? $s->{points}[$k]{x} : undef, spec => $spec};
}

sub _spec ($self, $vary, $set) {
    my ($first) = @{$self->{urls}};
    return Perennial::Bench::Spec->new(
        config      => $self->{config},
        urls        => [$first],
        concurrency => [$self->{concurrency}],
        requests    => $self->{requests},
        warmup      => 50,
        vary        => $vary,
        set         => [
            [LogLevel            => 'warn'],
            [MaxRequestsPerChild => 0],
            [MaxUnsharedSize     => 0],
            [MaxProcessSize      => 0],
            [PoolPrivateLimit    => 0],
            @$set,

            # Every value of the sweep gets its whole pool at once (lowered to its MaxClients)
            (   @$vary
                ? map { [$_ => max(@{$self->{sweep}})] }
                    qw(StartServers MinSpareServers MaxSpareServers)
                : ()
            )
        ],
    );
}

# The machine's memory: all of it on a dedicated box, what is available now on a shared one
sub _ram ($self) {
    return {kb => $self->{ram_kb}, from => 'given with --ram'} if $self->{ram_kb};
    open(my $fh, '<', '/proc/meminfo') or die "Can't read /proc/meminfo: $!\n";
    my %mem = map { /\A(\w+):\s+(\d+)/ ? ($1 => $2) : () } <$fh>;
    return $self->{shared}
        ? {kb => $mem{MemAvailable}, from => 'MemAvailable from /proc/meminfo: a shared machine'}
        : {kb => $mem{MemTotal},     from => 'MemTotal from /proc/meminfo: a dedicated machine'};
}

1;

__END__

=head1 NAME

Perennial::Tune - MaxClients and the other pool settings, from measurements

=head1 SYNOPSIS

    my $tune = Perennial::Tune->new(config => 'examples/perennial.conf',
        urls => ['/registry/heavy.pl'], ram_kb => 400 * 1024);
    my $r = $tune->run;
    say "MaxClients $r->{recommend}{settings}{MaxClients}";

=head1 DESCRIPTION

See L<Perennial::Manual::Tuning> for the method and each figure. The sizes are the workers'
resident size (RSS, C<Max_Process_Size>, the largest), the memory they share (the smallest
shared, C<Shared_RAM_per_Child>) and the growth of their private memory per request, read
from C</proc/PID/smaps_rollup> after a warm-up and after the measured requests.

=head1 FUNCTIONS

=head2 formula

    my $f = Perennial::Tune::formula($ram_kb, $max_process_kb, $shared_kb);
    # {max_clients => ..., no_sharing => ...}

=head2 recommend

    my $r = Perennial::Tune::recommend({formula => $f, memory => $m, sweep => $s}, $shared_box);

=head1 METHODS

=head2 new

=head2 run

=cut
