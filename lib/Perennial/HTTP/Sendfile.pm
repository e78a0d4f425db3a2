package Perennial::HTTP::Sendfile;
use v5.36;
use Fcntl        qw(SEEK_CUR);
use Scalar::Util ();
use Perennial::HTTP::Spool;

# A body that is a plain file leaves through sendfile(2): the kernel copies it to the socket,
# with no read into Perl and no 64 KB loop. Debian has no Perl binding for sendfile, so this is
# perl's own syscall() with the number from syscall.ph (perl's h2ph headers, Perennial::HTTP::Spool
# makes the call); where either is missing, or the handle has layers that change bytes, the
# caller's read loop is used instead.

my $SMALL = 65_536;    # Bytes of a file that leave with its head in one write

# Sends $length bytes of $fh after the head; false when sendfile cannot be used for it (nothing
# was written then), true when done (check $c->{broken} for a client that went away). A file of
# 64 KiB or less is read and leaves with its head in one write, bounded by Timeout as any write
# is: a blocking sendfile waits up to Timeout for each page, so a slow reader could stretch it.
# A larger one goes by the response's send_from_file, which may leave its rest to the parking
# process (the response then holds the file until it is handed over).
sub send_file ($c, $fh, $length) {
    return 0 if !Perennial::HTTP::Spool::sendfile_number() || !defined $length;
    return 0 if !_plain_file($fh) || $length > (-s $fh) - tell $fh;    # Shorter than its length
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
    elsif (_head_sent($c)) {
        $c->send_from_file($fh, $length);    # It closes the file when done with it
        return 1;
    }
    close $fh;
    return 1;
}

# The head of a file's response, written here, never spooled (the file cannot follow it there)
sub _head_sent ($c) {
    local $c->{may_spool};
    return $c->write_all(delete($c->{head}) // '');
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
