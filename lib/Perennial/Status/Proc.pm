package Perennial::Status::Proc;
use v5.36;
use POSIX  ();
use Socket qw(IPPROTO_TCP TCP_INFO);

# What the kernel says about the processes and the listening sockets: CPU time from
# /proc/PID/stat, the load average, and the listen queue (connections the kernel has accepted
# that no worker has taken yet), read from a socket with TCP_INFO or, without the socket, from
# /proc/net/tcp by the socket's inode.

my $TICK = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;

# {user, system, children_user, children_system} in seconds, or undef when the process is gone
sub cpu ($pid) {
    open(my $fh, '<', "/proc/$pid/stat") or return;
    my $stat = <$fh> // return;

    # The command name is in parentheses and may hold spaces; the fields follow the last ')'
    my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
    return {
        user            => $f[11] / $TICK,
        system          => $f[12] / $TICK,
        children_user   => $f[13] / $TICK,
        children_system => $f[14] / $TICK,
    };
}

sub load_average () {
    open(my $fh, '<', '/proc/loadavg') or return [];
    return [map { $_ + 0 } (split ' ', <$fh> // '')[0 .. 2]];
}

# [{listener, depth, limit}] for the sockets of a process that listens (its manager), from
# /proc: the inodes of its sockets, then their lines in /proc/net/tcp and tcp6
sub queue_of_process ($pid, $limit = undef) {
    my %inode;
    opendir(my $dh, "/proc/$pid/fd") or return [];
    for my $fd (readdir $dh) {
        my $link = readlink "/proc/$pid/fd/$fd" // next;
        $inode{$1} = 1 if $link =~ /\Asocket:\[(\d+)\]\z/;
    }
    my @queues;
    for my $table (qw(tcp tcp6)) {
        open(my $fh, '<', "/proc/net/$table") or next;
        <$fh>;
        while (my $line = <$fh>) {
            my @f = split ' ', $line;
            next unless $f[3] eq '0A' && $inode{$f[9]};    # LISTEN
            my (undef, $rx) = split /:/, $f[4];
            push @queues, {listener => _address($f[1]), depth => hex $rx, limit => $limit};
        }
    }
    return [sort { $a->{listener} cmp $b->{listener} } @queues];
}

# [{listener, depth, limit}] for listening sockets this process holds: TCP_INFO gives the
# queue (tcpi_unacked) and its limit (tcpi_sacked) of a listening socket; Unix sockets have none
sub queue_of_sockets (@listeners) {
    my @queues;
    for my $l (@listeners) {
        my $info = $l->port ? getsockopt($l->fh, IPPROTO_TCP, TCP_INFO) : undef;
        my ($depth, $limit) = $info && length $info >= 32 ? unpack('x24 L L', $info) : ();
        push @queues, {listener => $l->name, depth => $depth, limit => $limit};
    }
    return \@queues;
}

# 0100007F:2151 (little-endian hex) -> 127.0.0.1:8529; IPv6 as [addr]:port
sub _address ($hex) {
    my ($addr, $port) = split /:/, $hex;
    my $bytes = join '', map { scalar reverse pack 'H*', $_ } unpack '(A8)*', $addr;
    my $ip
        = length $bytes == 4
        ? join('.', unpack 'C4', $bytes)
        : '[' . Socket::inet_ntop(Socket::AF_INET6(), $bytes) . ']';
    return "$ip:" . hex $port;
}

1;

__END__

=head1 NAME

Perennial::Status::Proc - CPU time, load average and listen queues, from the kernel

=head1 SYNOPSIS

    my $cpu    = Perennial::Status::Proc::cpu($pid);         # {user => 1.2, system => 0.3, ...}
    my $queues = Perennial::Status::Proc::queue_of_sockets(@listeners);

=head1 DESCRIPTION

The listen queue is the number of connections the kernel has completed that no worker has
accepted yet: when every worker is busy it grows, and when it reaches its limit (ListenBacklog,
capped by C<net.core.somaxconn>) new clients wait for a SYN retry or are refused. Seeing it
grow tells that the pool is saturated before clients time out. Unix sockets have no such
figure here.

=head1 FUNCTIONS

=head2 cpu

    my $cpu = Perennial::Status::Proc::cpu($pid);

User and system CPU seconds of the process and of its reaped children.

=head2 load_average

    my ($one, $five, $fifteen) = @{Perennial::Status::Proc::load_average()};

=head2 queue_of_process

    my $queues = Perennial::Status::Proc::queue_of_process($manager_pid, $backlog);

The listen queues of a process's TCP sockets, for a process that does not hold them
(C<perennial status>). The limit is not in C</proc/net/tcp>; the caller gives it.

=head2 queue_of_sockets

    my $queues = Perennial::Status::Proc::queue_of_sockets(@listeners);

=cut
