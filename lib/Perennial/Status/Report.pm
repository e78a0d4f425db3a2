package Perennial::Status::Report;
use v5.36;
use Exporter    qw(import);
use POSIX       qw(strftime);
use Time::HiRes ();
use Perennial;
use Perennial::Scoreboard;
use Perennial::SizeLimit;
use Perennial::Status::Proc;

# Reads a scoreboard into the figures mod_status shows, and renders them as text, as
# `apachectl status` does

our @EXPORT_OK = qw(apache_time duration_words legend summary text);

my %BUSY       = map { $_ => 1 } qw(R W K L C G D);
my @LETTERS    = qw(_ S R W K D C L G I .);
my %STATE_NAME = (
    '_' => 'waiting for connection',
    S   => 'starting up',
    R   => 'reading request',
    W   => 'sending reply',
    K   => 'keepalive (read)',
    D   => 'DNS lookup',
    C   => 'closing connection',
    L   => 'logging',
    G   => 'gracefully finishing',
    I   => 'idle cleanup of worker',
    '.' => 'open slot with no current process',
);

# Times as mod_status writes them: "Sunday, 22-Nov-2026 19:51:03 UTC"
sub apache_time ($t) { strftime('%A, %d-%b-%Y %H:%M:%S %Z', localtime $t) }

# 3725 -> "1 hour 2 minutes 5 seconds"
sub duration_words ($seconds) {
    my $left = int $seconds;
    my @parts;
    for my $unit ([day => 86400], [hour => 3600], [minute => 60], [second => 1]) {
        my $n = int($left / $unit->[1]) or next;
        $left -= $n * $unit->[1];
        push @parts, "$n $unit->[0]" . ($n == 1 ? '' : 's');
    }
    return @parts ? join(' ', @parts) : '0 seconds';
}

# [letter, meaning] in the order of Apache's legend
sub legend () {
    [map { [$_, $STATE_NAME{$_}] } @LETTERS]
}

# Options: memory => 1 reads each worker's smaps (about 170 us each); queues => [...] the
# listen queues, from Perennial::Status::Proc
sub summary ($board, %opt) {
    my (undef, $slots, $manager, $started, $generation, $parked, $spooled) = $board->header_values;
    my $now = Time::HiRes::time();
    my %sum = (
        server_version => "Perennial/$Perennial::VERSION (Perl $^V)",
        mpm            => 'prefork',
        manager_pid    => $manager,
        started        => $started,
        now            => $now,
        generation     => $generation,
        parked         => $parked  // 0,    # Idle connections in the parking process
        spooled        => $spooled // 0,    # Bytes of slow readers' spooled rests it holds
        uptime         => $now - $started,
        load           => Perennial::Status::Proc::load_average(),
        queues         => $opt{queues} // [],
        states         => {map { $_ => 0 } keys %STATE_NAME},
        workers        => [],
        (map { $_ => 0 } qw(busy idle graceful processes accesses bytes micros)),
    );
    my $cpu = Perennial::Status::Proc::cpu($manager) // {};
    $sum{cpu} = {map { $_ => $cpu->{$_} // 0 } qw(user system children_user children_system)};
    for my $i (0 .. $slots - 1) {
        my $state = $board->state_of($i);
        my ($requests, $bytes, $micros) = $board->counters($i);
        $sum{accesses} += $requests;
        $sum{bytes}    += $bytes;
        $sum{micros}   += $micros;
        $sum{scoreboard} .= $state;
        $sum{states}{$state}++;
        _worker(\%sum, $board->slot($i), $now, $opt{memory}) if $state ne '.';
    }
    return \%sum;
}

sub _worker ($sum, $slot, $now, $memory) {
    $sum->{processes}++;
    $sum->{idle}++     if $slot->{state} eq '_';
    $sum->{busy}++     if $BUSY{$slot->{state}};
    $sum->{graceful}++ if $slot->{state} eq 'G';
    $slot->{since} = $slot->{request_started} ? $now - $slot->{request_started} : undef;
    if ($slot->{pid}) {
        $slot->{cpu}    = Perennial::Status::Proc::cpu($slot->{pid});
        $slot->{memory} = Perennial::SizeLimit::memory($slot->{pid})
            // Perennial::Scoreboard->published_memory($slot)
            if $memory;
        $sum->{cpu}{$_} += $slot->{cpu}{$_} // 0 for qw(user system);
    }
    push @{$sum->{workers}}, $slot;
}

sub text ($board, %opt) {
    my $s   = summary($board, memory => 1, %opt);
    my $out = sprintf "%s, manager pid %d, generation %d\n",
        @$s{qw(server_version manager_pid generation)};
    $out .= sprintf "Started: %s\nUptime: %d seconds\n",
        strftime('%Y-%m-%d %H:%M:%S', localtime $s->{started}),
        $s->{uptime};
    $out .= sprintf "Total accesses: %d - Total traffic: %.1f kB - Total duration: %d ms\n",
        $s->{accesses}, $s->{bytes} / 1024, $s->{micros} / 1000;
    $out .= sprintf "CPU: %.2f s user, %.2f s system (workers that exited: %.2f s, %.2f s)\n",
        @{$s->{cpu}}{qw(user system children_user children_system)};
    $out .= sprintf "%d requests currently being processed, %d idle workers\n", @$s{qw(busy idle)};
    for my $q (@{$s->{queues}}) {
        $out .= sprintf "Listen queue %s: %s waiting%s\n", $q->{listener}, $q->{depth} // '-',
            defined $q->{limit} ? " (limit $q->{limit})" : '';
    }
    $out .= "\n" . ($s->{scoreboard} =~ s/\.+\z//r) . "\n\nScoreboard key:\n";
    $out .= join('', map {"  \"$_->[0]\" $_->[1]\n"} @{legend()}) . "\n";
    $out .= sprintf "%-5s %-7s %-5s %-3s %8s %7s %7s %9s %8s %8s %8s %8s %-15s %s\n", 'Slot',
        'PID', 'Gen', 'M', 'Acc', 'CPU', 'SS', 'Last(ms)', 'RSS(kB)', 'PSS(kB)', 'Shared',
        'Private', 'Client', 'Request';
    my %total;

    for my $w (@{$s->{workers}}) {
        my $m = $w->{memory} // {};
        $total{$_} += $m->{$_} // 0 for qw(rss pss shared private);
        $out .= sprintf "%-5d %-7d %-5d %-3s %8d %7.2f %7s %9.1f %8s %8s %8s %8s %-15s %s\n",
            @$w{qw(slot pid generation state requests)},
            ($w->{cpu} ? $w->{cpu}{user} + $w->{cpu}{system} : 0),
            (defined $w->{since} ? int $w->{since} : '-'), $w->{last_micros} / 1000,
            (map { $m->{$_} // '-' } qw(rss pss shared private)), $w->{client} || '-',
            $w->{request} || '-';
    }
    $out
        .= sprintf "\nWorkers' memory: RSS %d kB, PSS %d kB, shared %d kB, private %d kB "
        . "(from /proc/PID/smaps_rollup)\n", @total{qw(rss pss shared private)}
        if %total;
    return $out;
}

1;

__END__

=head1 NAME

Perennial::Status::Report - totals and a text view of the scoreboard

=head1 SYNOPSIS

    use Perennial::Status::Report qw(summary text);
    print text(Perennial::Scoreboard->attach($file));

=head1 DESCRIPTION

Adds up a scoreboard as Apache's mod_status does: total accesses, traffic and duration over
each slot's life, busy, idle and gracefully finishing workers (busy means reading, writing,
keep-alive, logging, closing or finishing, as Apache counts them: not starting and not idle
cleanup), the count of each state letter and the scoreboard string, with the CPU time of the
manager and each worker, the load average and, when given, the listen queues.

=head1 FUNCTIONS

=head2 apache_time, duration_words

    say apache_time(time);          # Sunday, 22-Nov-2026 19:51:03 UTC
    say duration_words(3725);       # 1 hour 2 minutes 5 seconds

=head2 legend

    for (@{legend()}) { my ($letter, $meaning) = @$_; ... }

Apache's state letters with their meanings, in the order of its legend.

=head2 summary

    my $s = summary($board, memory => 1, queues => $queues);
    # {busy => 1, idle => 4, accesses => 1200, scoreboard => 'W____', workers => [...], ...}

=head2 text

    print text($board, queues => $queues);

The summary and one line per worker, as C<apachectl status> shows them, with each worker's
memory from C</proc/PID/smaps_rollup> in kB: resident (RSS), proportional (PSS: shared pages
divided among the processes that map them), shared with other processes, and private (what
retiring the worker would give back). Memory shows as C<-> for workers of another user.

=cut
