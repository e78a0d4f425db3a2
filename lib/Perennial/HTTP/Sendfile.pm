package Perennial::HTTP::Sendfile;
use v5.36;
use Errno        qw(EINTR);
use Fcntl        qw(SEEK_CUR);
use Scalar::Util ();

# A body that is a plain file leaves through sendfile(2): the kernel copies it to the socket,
# with no read into Perl and no 64 KB loop. Debian has no Perl binding for sendfile, so this is
# perl's own syscall() with the number from syscall.ph (perl's h2ph headers); where either is
# missing, or the handle has layers that change bytes, the caller's read loop is used instead.

my $SYS_SENDFILE
    = eval { require 'syscall.ph'; &SYS_sendfile() };    ## no critic (RequireBarewordIncludes)
my $CHUNK = 1 << 20;

# Sends $length bytes of $fh after the head; false when sendfile cannot be used for it (nothing
# was written then), true when done (check $c->{broken} for a client that went away)
sub send_file ($c, $fh, $length) {
    return 0 unless $SYS_SENDFILE && defined $length && _plain_file($fh);
    return 0 if $length > (-s $fh) - tell $fh;    # The head promises more than the file has
    Perennial::HTTP::Response::write_all($c, delete($c->{head}) // '') or return 1;
    my $left = $length;
    while ($left > 0) {
        my $n = syscall($SYS_SENDFILE, fileno $c->{sock},
            fileno $fh, 0, $left < $CHUNK ? $left : $CHUNK);
        if ($n > 0) { $left -= $n; $c->{bytes} += $n; next }
        next if $n < 0 && $! == EINTR;
        $c->{broken}     = $n < 0 ? "$!" : 'file shorter than its length';
        $c->{keep_alive} = 0;
        last;
    }
    close $fh;
    return 1;
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
