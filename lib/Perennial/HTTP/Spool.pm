package Perennial::HTTP::Spool;
use v5.36;
use Errno qw(EAGAIN EINTR);
use Fcntl qw(SEEK_CUR SEEK_SET);

# The rest of a response that its client has not taken yet, held in a file: the file of a static
# body itself, from where sendfile left it, or bytes from memory written to an anonymous
# temporary file (a streamed response adds what the application writes after them). The bytes
# leave from the file by sendfile(2) at an offset of their own, so what is added goes to the end
# while what is sent comes from the start; the parking process takes the file with the
# connection, positioned at what is still to go.

# sendfile's number (perl's syscall.ph); without it, nothing is spooled and the worker writes
my $SYS_SENDFILE
    = eval { require 'syscall.ph'; &SYS_sendfile() };    ## no critic (RequireBarewordIncludes)
my $SEND_MAX = 1 << 20;     # Bytes a sendfile call is asked for
my $MAX      = 64 << 20;    # Bytes one response may hold in a spool (its rest, not yet taken)

# ParkSpoolLimit: the bytes all spools may hold, less what the parking process holds (the
# scoreboard's count); without it, only the most one response may hold bounds a spool
my ($BOARD, $LIMIT);

sub sendfile_number () {$SYS_SENDFILE}

# Set once in each worker: the scoreboard and ParkSpoolLimit in bytes
sub limit ($board, $bytes) { ($BOARD, $LIMIT) = ($board, $bytes); return }

# Whether a spool may hold $bytes
sub _room ($bytes) { $bytes <= $MAX && (!$BOARD || $BOARD->spooled + $bytes <= $LIMIT) }

# The rest of $$data_ref from $off in a new anonymous file; undef when it is over the most a
# spool holds or cannot be written
sub of_bytes ($class, $data_ref, $off) {
    my $left = length($$data_ref) - $off;
    return if !$SYS_SENDFILE || !_room($left);
    open(my $file, '+>', undef) or return;
    binmode $file;
    return unless (syswrite($file, $$data_ref, $left, $off) // -1) == $left;
    return bless {file => $file, at => 0, end => $left, grows => 1}, $class;
}

# $left bytes of the file $fh from where it stands (a static body: nothing is added to it)
sub of_file ($class, $fh, $left) {
    my $at = sysseek($fh, 0, SEEK_CUR) // return;
    return bless {file => $fh, at => 0 + $at, end => $at + $left, grows => 0}, $class;
}

# Bytes still to go
sub left ($self) { $self->{end} - $self->{at} }

# Adds $data after what is held: false when it is not taken (a static file's spool, the most a
# spool holds reached, or the write failed): the caller sends what is held first
sub add ($self, $data) {
    return 0 if !$self->{grows} || !_room($self->{end} + length $data);
    my $n = syswrite $self->{file}, $data;
    return 0 if ($n // -1) != length $data;
    $self->{end} += $n;
    return 1;
}

# Sends what the socket takes at once (it does not block); the bytes sent (0 when the socket is
# full or a signal came), undef when the client went ($! says why), -1 when the file is shorter
# than it should be
sub send_some ($self, $sock) {
    my $want   = left($self);
    my $offset = pack 'q', $self->{at};    # sendfile moves it, not the file's own position
    my $n      = syscall($SYS_SENDFILE, fileno $sock, fileno $self->{file},
        $offset, $want < $SEND_MAX ? $want : $SEND_MAX);
    if ($n > 0) { $self->{at} = unpack 'q', $offset; return $n }
    return 0  if $n < 0 && ($! == EAGAIN || $! == EINTR);
    return -1 if $n == 0;
    return;
}

# The file, positioned at the bytes still to go, and their count: what the parking process is
# given (it reads from the file's position)
sub to_hand ($self) {
    sysseek($self->{file}, $self->{at}, SEEK_SET) // return (undef, 0);
    return ($self->{file}, left($self));
}

# Done with: the file closes (a static body's too, as a server closes a PSGI body)
sub discard ($self) { CORE::close($self->{file}); return }

1;

__END__

=head1 NAME

Perennial::HTTP::Spool - the rest of a response a slow reader has not taken, held in a file

=head1 SYNOPSIS

    my $spool = Perennial::HTTP::Spool->of_bytes(\$data, $sent) or return;    # or of_file
    $spool->add($more) or ...;                  # a streamed response's next bytes
    my $n = $spool->send_some($sock);           # what the socket takes now
    my ($file, $left) = $spool->to_hand;        # for the parking process

=head1 DESCRIPTION

When a client takes a response more slowly than a worker writes it, the worker keeps what is
left in a spool and hands it to the parking process with the connection once the response is
complete (L<Perennial::HTTP::Response>'s C<finish>). A spool is a file: an anonymous temporary
one (in C<TMPDIR>, gone when closed) for bytes from memory, at most 64 MB of them, or
the static file being sent. All the spools of bytes from memory the parking process holds, and
the one a worker makes, stay within C<ParkSpoolLimit> (set by C<limit>, read from the
scoreboard's count; workers that spool at the same moment may each pass it by what they add). Its bytes leave by C<sendfile(2)> from an offset of the spool's
own. Where perl has no C<syscall.ph> (no sendfile number), C<of_bytes> gives nothing and the
worker writes the response itself.

=cut
