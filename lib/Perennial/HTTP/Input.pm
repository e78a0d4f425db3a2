package Perennial::HTTP::Input;
use v5.36;
use Exporter              qw(import);
use File::Temp            ();
use Perennial::HTTP::Body qw(dechunk);

# The in-memory handles' layer, loaded with the server rather than by each worker's first
# request: a module a worker loads is memory it does not share
use PerlIO::scalar ();

# A request's psgi.input: for a request without a body, one empty in-memory handle that the
# caller keeps and hands to each such request; for a body, the bytes received into memory, or
# into a temporary file past 64 KiB so that a large upload never sits in memory.

our @EXPORT_OK = qw(empty_input input_of receive_body);

my $MEMORY_BODY = 65_536;

# An empty input, and a reference to the empty string it reads, for the caller to keep and hand
# to each request without a body while it still is one: while the handle holds the string (the
# string's count is 2, the handle's and the reference's) and nothing tied it. A request that
# closed it, or reopened it on anything else (a script's STDIN is its IO), even on a string,
# must not pass it on. Opening one for each request cost 7k instructions.
sub empty_input () {
    my $empty = '';
    open(my $new, '<', \$empty) or die "Can't open an empty body: $!\n";
    return ($new, \$empty);
}

# Moves the body from the buffer, and from the socket through $read (which appends to the
# buffer and returns what sysread does), into $body ({data, length, file}): 1 when complete, 0
# when the client closed, or an error status (400 and the like from dechunk, 408 when a read
# timed out)
sub receive_body ($read, $buf_ref, $body, $kind, $length, $env, $limits) {
    my $state = {total => 0, env => $env};
    while (1) {
        my $done;
        if ($kind eq 'length') {
            my $part = substr $$buf_ref, 0, $length - $state->{total}, '';
            $body->{data} .= $part;
            $done = ($state->{total} += length $part) >= $length;
        }
        else { $done = dechunk($buf_ref, $state, \$body->{data}, $limits) }
        $body->{length} = $state->{total};
        _spill($body) if length $body->{data} > $MEMORY_BODY;
        return $done  if $done;
        my $n = $read->();
        return 408 if !defined $n;
        return 0   if !$n;
    }
}

# The handle a received body is read from, at its start
sub input_of ($body) {
    if (my $file = $body->{file}) {
        _spill($body);
        seek($file, 0, 0) or die "Can't rewind the request body: $!\n";
        return $file;
    }
    open(my $in, '<', \$body->{data}) or die "Can't open in-memory body: $!\n";
    return $in;
}

sub _spill ($body) {
    $body->{file} //= File::Temp->new(UNLINK => 1)
        // die "Can't create a file for the request body: $!\n";
    binmode $body->{file};
    print {$body->{file}} $body->{data} or die "Can't write the request body: $!\n";
    $body->{data} = '';
}

1;

__END__

=head1 NAME

Perennial::HTTP::Input - a request's psgi.input

=head1 SYNOPSIS

    use Perennial::HTTP::Input qw(empty_input input_of receive_body);
    ($kept, $string) = empty_input()                          # Closed, reopened or tied
        if Internals::SvREFCNT($$string) != 2 || tied *$kept;
    $env->{'psgi.input'} = $kept;                             # No body
    my $body   = {data => '', length => 0};
    my $status = receive_body(sub { sysread $sock, $buf, 65536, length $buf }, \$buf, $body,
        'length', $env->{CONTENT_LENGTH}, $env, $limits);
    $env->{'psgi.input'} = input_of($body) if $status == 1;

=head1 DESCRIPTION

The input of a request without a body is one empty in-memory handle, kept by the caller and
made again only when a request closed it or reopened it. A body is received from what is
already buffered and then from the socket, decoded from chunks when it came chunked
(L<Perennial::HTTP::Body/dechunk>), and kept in memory up to 64 KiB, in a temporary file
past that.

=head1 FUNCTIONS

=head2 empty_input

    my ($kept, $string) = empty_input();

An empty in-memory handle and a reference to the string it reads, to keep and hand to each
request without a body while the handle still holds the string (C<Internals::SvREFCNT> of it is
2) and is not tied: a request may close it, reopen it on something else, or tie it.

=head2 input_of

    my $fh = input_of($body);

=head2 receive_body

    my $status = receive_body($read, \$buf, $body, $kind, $length, $env, $limits);

C<$kind> is C<length> (with C<$length>) or C<chunked>. Returns 1 when the body is whole, 0 when
the client closed, or a status to refuse it with.

=cut
