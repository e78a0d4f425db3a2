package Perennial::HTTP::Body;
use v5.36;
use Exporter                 qw(import);
use Perennial::HTTP::Request qw(offending token);

# How a request's body is framed (Content-Length, chunked) and the decoding of a chunked one, as
# RFC 9112 7.1 writes it. No I/O here: the connection loop reads, these functions judge the bytes.

our @EXPORT_OK = qw(body_framing dechunk);

my $TOKEN = token();

# The status, with the reason for the log and the answer (a sentence of the server's own)
sub _refusal ($env, $status, $why, $bytes = undef) {
    $env->{'perennial.refused'} = $why;
    offending($env, $bytes) if defined $bytes;
    return $status;
}

# How the body is framed: ('none'), ('length', N), ('chunked'), or (STATUS) when refused
sub body_framing ($env, $limits) {
    my $te = $env->{HTTP_TRANSFER_ENCODING};
    my $cl = $env->{CONTENT_LENGTH};
    if (defined $te) {
        return _refusal($env, 400, 'it has both Content-Length and Transfer-Encoding')
            if defined $cl;
        return _refusal($env, 501, 'its Transfer-Encoding is not chunked', "Transfer-Encoding: $te")
            if lc $te ne 'chunked';
        return 'chunked';
    }
    return 'none' unless defined $cl;

    # A list, even of one value repeated (two Content-Length lines): Apache refuses it, and
    # so a proxy in front and this server cannot read two lengths into one request
    return _refusal($env, 400, 'its Content-Length is a list, not one value', "Content-Length: $cl")
        if index($cl, ',') >= 0;
    return _refusal($env, 400, 'its Content-Length is not a number', "Content-Length: $cl")
        if $cl !~ /\A\d{1,18}\z/;
    return _refusal($env, 413, "its body is larger than LimitRequestBody ($limits->{body})")
        if $limits->{body} && $cl > $limits->{body};
    return $cl ? ('length', $cl + 0) : 'none';
}

# A chunk-size line (RFC 9112 7.1): hex digits, then extensions ";name" or ";name=value" (a
# token or a quoted string), each with optional blanks around; $1 is the size. Unsafe lets
# the line end in a bare LF.
my $QUOTED    = qr/"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t\x20-\x7e\x80-\xff])*"/;
my $CHUNK_EXT = qr/(?:[ \t]*;[ \t]*$TOKEN(?:[ \t]*=[ \t]*(?:$TOKEN|$QUOTED))?)*[ \t]*/;
my %SIZE_LINE = (
    strict => qr/\A([0-9a-fA-F]{1,15})$CHUNK_EXT\r\n\z/,
    unsafe => qr/\A([0-9a-fA-F]{1,15})$CHUNK_EXT\r?\n\z/,
);

# A trailer field line: as a header's, a token, a colon, and a value without control bytes
my %TRAILER_LINE = (
    strict => qr/\A$TOKEN:[\t\x20-\x7e\x80-\xff]*\r\n\z/,
    unsafe => qr/\A$TOKEN:[\t\x20-\x7e\x80-\xff]*\r?\n\z/,
);

# Decodes what it can of a chunked body from $buf into $out. $state remembers where it is
# between calls, and $state->{env} is the request's, which a refusal gives its reason and bytes
# to (as body_framing's do). Returns 1 when the body is complete, 0 for more bytes, or an error
# status. $limits: body (LimitRequestBody), fields and field_size
# (for the trailer, as LimitRequestFields and LimitRequestFieldSize) and unsafe.
sub dechunk ($buf_ref, $state, $out_ref, $limits) {
    while (1) {
        if ($state->{left}) {
            my $take = length $$buf_ref < $state->{left} ? length $$buf_ref : $state->{left};
            $$out_ref .= substr $$buf_ref, 0, $take, '';
            $state->{left}  -= $take;
            $state->{total} += $take;
            return 0 if $state->{left};
            $state->{crlf} = 1;
        }
        if ($state->{crlf}) {
            my $ended = _data_ended($buf_ref, $state, $limits);
            return $ended if defined $ended;
        }
        my $eol = index $$buf_ref, "\n";
        return _line_too_long($state, $limits)
            if ($eol < 0 ? length $$buf_ref : $eol) > $limits->{field_size} + 1;
        return 0 if $eol < 0;
        my $done = _chunk_line(substr($$buf_ref, 0, $eol + 1, ''), $state, $limits);
        return $done if defined $done;
    }
}

# The CRLF after a chunk's data (a bare LF in Unsafe): undef once taken, else 0 for more bytes
# or an error status
sub _data_ended ($buf_ref, $state, $limits) {
    return 0 if length $$buf_ref < 2 && $$buf_ref ne "\n";
    my $end
        = substr($$buf_ref, 0, 2) eq "\r\n"                    ? 2
        : $limits->{unsafe} && substr($$buf_ref, 0, 1) eq "\n" ? 1
        :                                                        0;
    return _chunk_refused($state, 'a chunk\'s data is not followed by CRLF') if !$end;
    substr $$buf_ref, 0, $end, '';
    $state->{crlf} = 0;
    return;
}

# A size line longer than LimitRequestFieldSize is 413, a trailer line 400, as in Apache
sub _line_too_long ($state, $limits) {
    my $limit = "LimitRequestFieldSize ($limits->{field_size})";
    return $state->{trailer}
        ? _chunk_refused($state, "a trailer field is longer than $limit")
        : _chunk_refused($state, "a chunk-size line is longer than $limit", 413);
}

sub _chunk_refused ($state, $why, $status = 400, $bytes = undef) {
    return _refusal($state->{env} //= {}, $status, $why, $bytes);
}

# A client's number, which is no cause for a perl warning however large (15 digits at most)
sub _hex ($digits) {
    no warnings 'portable';    ## no critic (ProhibitNoWarnings) the client's, not perl's
    return hex $digits;
}

# A chunk-size line or a trailer line: sets the next chunk's size, or says how the body ends
sub _chunk_line ($line, $state, $limits) {
    my $mode = $limits->{unsafe} ? 'unsafe' : 'strict';
    if ($state->{trailer}) {
        return 1 if $line eq "\r\n" || ($line eq "\n" && $limits->{unsafe});
        return _chunk_refused($state, 'a trailer line is not "name: value" ended by CRLF', 400,
            $line)
            if $line !~ $TRAILER_LINE{$mode};
        return _chunk_refused($state,
            "the trailer has more fields than LimitRequestFields ($limits->{fields})")
            if $state->{trailer}++ > $limits->{fields};
        return;
    }
    $line =~ $SIZE_LINE{$mode}
        or return _chunk_refused($state, 'a chunk-size line is not hex digits, extensions and CRLF',
        400, $line);
    my $size = _hex($1);
    if (!$size) { $state->{trailer} = 1; return }
    return _chunk_refused($state, "its body is larger than LimitRequestBody ($limits->{body})", 413)
        if $limits->{body} && ($state->{total} // 0) + $size > $limits->{body};
    $state->{left} = $size;
    return;
}

1;

__END__

=head1 NAME

Perennial::HTTP::Body - the framing of a request's body, and chunked decoding

=head1 SYNOPSIS

    use Perennial::HTTP::Body qw(body_framing dechunk);
    my $limits = {body => 1 << 30, fields => 100, field_size => 8190, unsafe => 0};
    my ($kind, $length) = body_framing(\%env, $limits);
    my $done = dechunk(\$buf, \%state, \$body, $limits) if $kind eq 'chunked';

=head1 DESCRIPTION

Says how a request's body is framed (refusing both Content-Length and Transfer-Encoding, a list
of Content-Length values, an encoding other than chunked) and decodes a chunked body, holding
its size lines, extensions, line ends and trailer to RFC 9112's grammar and to the head's
limits. HttpProtocolOptions Unsafe (C<unsafe>) lets its lines end in a bare LF.

=head1 FUNCTIONS

=head2 body_framing

    my ($kind, $length) = body_framing($env, {body => $limit});

Returns C<none>, C<length> and the length, C<chunked>, or an error status (400, 413, 501).

=head2 dechunk

    my %state = (env => $env);
    my $done  = dechunk(\$buf, \%state, \$body, $limits);

Moves decoded chunk data from C<$buf> to the end of C<$body> and counts it in
C<< $state->{total} >> (the caller may empty C<$body> between calls). Returns 1 at the end of
the body, 0 when it needs more bytes, or 400 or 413, with the reason (and the line that broke a
rule) in C<< $state->{env} >>'s C<perennial.refused> (and C<perennial.offending>), as
L</body_framing> gives its own.
Size lines, chunk extensions, the CRLF after each chunk's data and the trailer's fields are
held to RFC 9112's grammar; the trailer to C<fields> and C<field_size> as the head is, and is
dropped (its fields never reach the application).

=cut
