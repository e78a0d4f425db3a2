package Perennial::SizeLimit;
use v5.36;
use POSIX ();

# How much memory a process holds, from /proc/PID/smaps_rollup (what is resident, shared with
# other processes or its own), and the Apache2::SizeLimit rules that retire a worker.

my $PAGE_KB = POSIX::sysconf(POSIX::_SC_PAGESIZE()) / 1024;
my %FIELD   = (
    Rss           => 'rss',
    Pss           => 'pss',
    Shared_Clean  => 'shared',
    Shared_Dirty  => 'shared',
    Private_Clean => 'private',
    Private_Dirty => 'private',
    Swap          => 'swap',
);

sub new ($class, %args) {
    my $config = $args{config};
    return bless {
        max_size     => $config->max_process_size,
        min_shared   => $config->min_shared_size,
        max_unshared => $config->max_unshared_size,
        interval     => $config->size_check_interval,
        count        => 0,
    }, $class;
}

# The reason a worker should retire now, or undef; looks only every interval requests. The
# resident size comes from /proc/PID/statm (a few microseconds); smaps_rollup, twenty times
# dearer, is read only when shared memory matters: for MinSharedSize, or for MaxUnsharedSize
# once the resident size passes it (private memory is never more than the resident size;
# swapped memory, rare in a worker, is seen from then on). (The loop in C counts and reads the
# resident size itself, xs/LoopSize.c, and asks judge only when a limit may be passed.)
sub exceeded ($self, $pid = $$) {
    return if ++$self->{count} < $self->{interval};
    $self->{count} = 0;
    my $size = $self->_size($pid) // return;
    return $self->judge($size, $pid);
}

# The reason a process of $size KB resident should retire, or undef
sub judge ($self, $size, $pid = $$) {
    return "MaxProcessSize $self->{max_size} KB exceeded: resident $size KB"
        if $self->{max_size} && $size > $self->{max_size};
    return unless $self->{min_shared} || ($self->{max_unshared} && $size > $self->{max_unshared});
    my $m        = memory($pid) or return;
    my $unshared = $m->{private} + $m->{swap};
    return "MinSharedSize $self->{min_shared} KB not met: shared $m->{shared} KB"
        if $self->{min_shared} && $m->{shared} < $self->{min_shared};
    return "MaxUnsharedSize $self->{max_unshared} KB exceeded: unshared $unshared KB"
        if $self->{max_unshared} && $unshared > $self->{max_unshared};
    return;
}

sub is_set ($self) { !!($self->{max_size} || $self->{min_shared} || $self->{max_unshared}) }

# {rss, pss, shared, private, swap} in KB, or undef when the process is gone or not ours
sub memory ($pid) {
    open(my $fh, '<', "/proc/$pid/smaps_rollup") or return;
    my %m = (rss => 0, pss => 0, shared => 0, private => 0, swap => 0);
    while (my $line = <$fh>) {
        my ($name, $kb) = $line =~ /\A(\w+):\s+(\d+) kB/ or next;
        my $key = $FIELD{$name} or next;
        $m{$key} += $kb;
    }
    return $m{rss} ? \%m : undef;
}

# Resident KB, from /proc/PID/statm (the second field, in pages). The worker keeps its own
# open and reads it again from the start: two system calls a look.
sub _size ($self, $pid) {
    my $fh = $self->{statm}{$pid} //= do {
        open(my $h, '<', "/proc/$pid/statm") or return;
        $h;
    };
    sysseek($fh, 0, 0)          or return;
    sysread($fh, my $text, 256) or return;
    my (undef, $pages) = split ' ', $text;
    return $pages ? $pages * $PAGE_KB : undef;
}

1;

__END__

=head1 NAME

Perennial::SizeLimit - a worker's memory from smaps, and the limits that retire it

=head1 SYNOPSIS

    my $limit = Perennial::SizeLimit->new(config => $config);
    if (my $why = $limit->exceeded) { $log->info("worker $$ retires: $why") }
    my $m = Perennial::SizeLimit::memory($pid);    # {rss, pss, shared, private, swap} in KB

=head1 DESCRIPTION

Reads C</proc/PID/smaps_rollup>, which counts a page as shared only while another process maps
it too (C<statm>'s "shared" counts every file-backed page, so it over-counts what a fork
shares). The rules are Apache2::SizeLimit's: a worker retires when its size is over
C<MaxProcessSize>, its shared memory under C<MinSharedSize>, or its unshared memory over
C<MaxUnsharedSize>. Size is resident memory; unshared is private plus swapped memory.
Apache2::SizeLimit with smaps takes the virtual size instead, which counts memory the process
never touched.

=head1 CONFIGURATION

C<MaxProcessSize>, C<MinSharedSize>, C<MaxUnsharedSize> (KB, or with a K, M or G suffix; 0:
no limit) and C<SizeCheckInterval> (requests between checks; 1). See L<Perennial::Config>.

=head1 FUNCTIONS

=head2 memory

    my $m = Perennial::SizeLimit::memory($pid);

The process's memory in KB, or undef when it cannot be read.

=head1 METHODS

=head2 exceeded

    my $why = $limit->exceeded;

Counts a request and, every C<SizeCheckInterval> requests, reads the memory of this process:
returns which limit is passed, with the figures, or undef. The resident size is read from
C</proc/PID/statm> (a few microseconds); C<smaps_rollup> (about 170 microseconds for a 20 MB
worker) only for C<MinSharedSize>, or for C<MaxUnsharedSize> once the resident size passes it.

=head2 is_set

    my $checking = $limit->is_set;

True when at least one limit is configured.

=head2 judge

    my $why = $limit->judge($resident_kb);

What C<exceeded> says once it has read the resident size: which limit a process of that size
passes (reading C<smaps_rollup> only when shared memory matters), or undef. The loop in C
counts the requests and reads the resident size itself, and asks this only when the size passes
a limit or shared memory is to be looked at.

=head2 new

    my $limit = Perennial::SizeLimit->new(config => $config);

=cut
