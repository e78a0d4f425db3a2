package Perennial::HTTP::Sendfile;
use v5.36;
use Errno                 qw(EAGAIN EINTR);
use Fcntl                 qw(SEEK_CUR);
use IO::Handle            ();
use Scalar::Util          ();
use Time::HiRes           ();
use Perennial::HTTP::Core ();

# A body that is a plain file leaves through sendfile(2): the kernel copies it to the socket,
# with no read into Perl and no 64 KB loop. Debian has no Perl binding for sendfile, so this is
# perl's own syscall() with the number from syscall.ph (perl's h2ph headers); where either is
# missing, or the handle has layers that change bytes, the caller's read loop is used instead.

my $SYS_SENDFILE
    = eval { require 'syscall.ph'; &SYS_sendfile() };    ## no critic (RequireBarewordIncludes)
my $CHUNK           = 1 << 20;
my $SMALL           = 65_536;   # Bytes of a file that leave with its head in one write
my $HAND_OVER_AFTER = 1;        # Seconds of a slow reader before the parking process takes the rest

# Sends $length bytes of $fh after the head; false when sendfile cannot be used for it (nothing
# was written then), true when done (check $c->{broken} for a client that went away). A file of
# 64 KiB or less is read and leaves with its head in one write, bounded by Timeout as any write
# is: a blocking sendfile waits up to Timeout for each page, so a slow reader could stretch it.
sub send_file ($c, $fh, $length) {
    return 0 unless $SYS_SENDFILE && defined $length && _plain_file($fh);
    return 0 if $length > (-s $fh) - tell $fh;    # The head promises more than the file has
    if ($length <= $SMALL) {
        my $body;
        my $got = sysread $fh, $body, $length;
        if (($got // -1) != $length) {    # The caller's read loop says why, from where it was
            sysseek $fh, -$got, SEEK_CUR if $got;
            return 0;
        }
        $c->write_all(delete($c->{head}) . $body)
            and $c->{bytes} += $length;
    }
    elsif ($c->write_all(delete($c->{head}) // '')) {
        IO::Handle::blocking($c->{sock}, 0);
        _send($c, $fh, $length);
        IO::Handle::blocking($c->{sock}, 1);
    }
    close $fh;
    return 1;
}

# The file's bytes, without blocking: each part when the socket can take it, 64 KiB within
# each Timeout; $c->{broken} says why when they could not all go
sub _send ($c, $fh, $left) {
    my $sock = $c->{sock};
    my ($until, $taken) = (Time::HiRes::time() + ($c->{timeout} // 60), 0);
    my $hand_at = $c->{park_rest} && Time::HiRes::time() + $HAND_OVER_AFTER;
    while ($left > 0) {
        if ($hand_at && Time::HiRes::time() >= $hand_at) {    # The rest to the parking process
            return if _handed_over($c, $fh, $left);
            undef $hand_at;
        }
        my $n
            = syscall($SYS_SENDFILE, fileno $sock, fileno $fh, 0, $left < $CHUNK ? $left : $CHUNK);
        if ($n > 0) {
            ($left, $c->{bytes}) = ($left - $n, $c->{bytes} + $n);
            $until = $c->deadline($until, \$taken, $n);
            next;
        }
        next if $n < 0 && _again($sock, $until, $hand_at);
        $n < 0
            && $! == EAGAIN ? $c->too_slow : $c->broken($n ? "$!" : 'file shorter than its length');
        last;
    }
    return;
}

# After a sendfile that failed: true to try again (a signal; or the socket full, and it can take
# more before the deadline, or the time to hand the rest over has come)
sub _again ($sock, $until, $hand_at) {
    return 1 if $! == EINTR;
    return 0 if $! != EAGAIN;
    return Perennial::HTTP::Core::ready($sock, $hand_at && $hand_at < $until ? $hand_at : $until, 1)
        || $hand_at;
}

# A slow reader's rest: the file itself goes to the parking process, from where it stands (the
# bytes count as sent: the parking process sends them)
sub _handed_over ($c, $fh, $left) {
    IO::Handle::blocking($c->{sock}, 1);
    if ($c->{park_rest}->($c, undef, 0, $fh, $left)) { $c->{bytes} += $left; return 1 }
    IO::Handle::blocking($c->{sock}, 0);
    return 0;
}

# A regular file read through no layer but the plain ones, with nothing buffered ahead
sub _plain_file ($fh) {
    return 0 unless ref $fh eq 'GLOB' || (Scalar::Util::blessed($fh) && $fh->isa('IO::Handle'));
    my $fd = eval { fileno $fh } // return 0;
    return 0 if $fd < 0 || !-f $fh;
    return 0 if grep { !/\A(?:unix|perlio)\z/ } PerlIO::get_layers($fh);
    my $at = sysseek($fh, 0, SEEK_CUR) // return 0;
    return $at == tell $fh;
}

1;

__END__

=head1 NAME

Perennial::HTTP::Sendfile - a file body sent by the kernel (sendfile(2))

=head1 SYNOPSIS

    return 1 if Perennial::HTTP::Sendfile::send_file($c, $fh, $length);

=head1 DESCRIPTION

When a response body is a regular file opened without translating layers, its bytes go from
the file to the socket by sendfile(2), a megabyte per call, after the head. Anything else (a
pipe, an in-memory handle, an object with getline, a handle with an encoding layer) is left
to the caller's read loop.

=head1 FUNCTIONS

=head2 send_file

    my $done = Perennial::HTTP::Sendfile::send_file($connection, $fh, $length);

=cut
