package Perennial::HTTP::Request;
use v5.36;
use Exporter         qw(import);
use HTTP::Parser::XS qw(parse_http_request);

# Bytes to a PSGI environment: the request head, the framing of the body and the decoding of
# chunked bodies. No I/O here: the connection loop reads, these functions judge the bytes.

our @EXPORT_OK = qw(body_framing dechunk head_ready parse_head without_dot_segments);

# A header line that is not "token:" (a space in the name, obsolete line folding) is refused:
# both are ways to make two servers disagree on where a request ends
my $TOKEN     = qr/[!#\$%&'*+.^_`|~0-9A-Za-z-]+/;    # RFC 9110's tchar, one or more
my $BAD_FIELD = qr/\n(?!$TOKEN:)(?=[^\r\n])/;

# A Host header as Apache's strict check takes it: a name (letters, digits, ".", "-", "_") or an
# IPv6 address in brackets, and a port; $1 is the port
my $HOST = qr/\A(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?\z/;
my %HOST_OK;    # The values judged already: most requests repeat a few (a match costs 3k)

sub _host_ok ($host) {
    %HOST_OK = () if keys %HOST_OK >= 1000;
    return $host =~ $HOST && ($1 // 1) >= 1 && ($1 // 1) <= 65535 ? 1 : 0;
}

# Returns the length of the head, 0 when more bytes are needed, or minus an HTTP error status
sub parse_head ($buf_ref, $env, $limits) {
    my $eol = index $$buf_ref, "\n";
    return _refused($env, 414, "its request line is longer than LimitRequestLine ($limits->{line})")
        if $eol > $limits->{line} + 1 || ($eol < 0 && length $$buf_ref > $limits->{line} + 1);
    my $len = parse_http_request($$buf_ref, $env);
    if ($len == -2) {
        return 0 if length $$buf_ref <= $limits->{field_size};
        my ($status, $why) = _field_limits(substr($$buf_ref, $eol + 1), $limits);
        return $status ? _refused($env, $status, $why) : 0;
    }
    return _refused($env, 400, _malformed($$buf_ref, $eol)) if $len < 0;

    # The parser reads "HTTP/1.01" as 1.1: the version must be written as it says
    my $end = substr($$buf_ref, $eol - 1, 1) eq "\r" ? $eol - 1 : $eol;
    return _refused($env, 400, 'its HTTP version is not written "HTTP/1.0" or "HTTP/1.1"')
        if substr($$buf_ref, $end - 9, 9) ne " $env->{SERVER_PROTOCOL}";
    my $head = substr $$buf_ref, $eol, $len - $eol;
    return _refused($env, 400,
        'a header line is not "name: value" (a space before its colon, or obsolete line folding)')
        if $head =~ $BAD_FIELD;
    if (length $head > $limits->{field_size} || ($head =~ tr/\n//) > $limits->{fields} + 2) {
        my ($status, $why) = _field_limits($head, $limits);
        return _refused($env, $status, $why) if $status;
    }
    return _judged($env) || $len;
}

# What the parsed head says: its version, its Host, its path (merged here, once, before
# anything routes it); 0 when it may go on, else minus the status
sub _judged ($env) {
    return _refused($env, 505, _version_refused($env->{SERVER_PROTOCOL}))
        if $env->{SERVER_PROTOCOL} !~ m{\AHTTP/1\.[01]\z};
    my $host = $env->{HTTP_HOST};
    return _refused($env, 400, 'it has more than one Host header')
        if defined $host && index($host, ',') >= 0;
    return _refused($env, 400, 'an HTTP/1.1 request needs a Host header')
        if !defined $host && $env->{SERVER_PROTOCOL} eq 'HTTP/1.1';
    return _refused($env, 400, 'its Host is not a name or an address, with a port of 1 to 65535')
        if defined $host && !($HOST_OK{$host} //= _host_ok($host));
    if (index($env->{PATH_INFO}, '/.') >= 0) {
        $env->{PATH_INFO} = without_dot_segments($env->{PATH_INFO})
            // return _refused($env, 400, 'its path climbs above the root');
    }
    return 0;
}

# Minus the status, with the reason for the log and the answer (a sentence of the server's own,
# never the client's bytes)
sub _refused ($env, $status, $why) {
    $env->{'perennial.refused'} = $why;
    return -$status;
}

sub _malformed ($buf, $eol) {
    my $line = substr $buf, 0, $eol < 0 ? length $buf : $eol;
    return $line =~ m{\A$TOKEN [^ \x00-\x1f\x7f]+ HTTP/\d\.\d\r?\z}
        ? 'a header line is malformed'
        : 'its request line is not "METHOD TARGET HTTP/x.y"';
}

sub _version_refused ($version) {
    return $version eq 'HTTP/2.0'
        ? 'an HTTP/2 connection preface: this server speaks HTTP/1.1 and HTTP/1.0'
        : 'its HTTP version is not 1.0 or 1.1';
}

# RFC 3986 5.2.4 on an absolute path: "." segments go, ".." takes the segment before it away
# ("/a/./b/../c" is "/a/c"; "/a/b/.." is "/a/"); undef when a ".." would climb above "/", which
# Apache answers with 400 too, unless $at_root says to stop there, as the RFC does
sub without_dot_segments ($path, $at_root = 0) {
    my @parts = split m{/}, $path, -1;
    shift @parts;    # What is before the first slash
    my @kept;
    while (@parts) {
        my $part = shift @parts;
        if ($part ne '.' && $part ne '..') { push @kept, $part; next }
        if ($part eq '..') {
            return if !@kept && !$at_root;    # Above the root
            pop @kept;
        }
        push @kept, '' unless @parts;         # A last "." or "..": a directory, with its slash
    }
    return '/' . join '/', @kept;
}

# Whether a head still arriving is worth parsing now: its request line has just come (a bad one
# is refused at once), its end has (an empty line), or a line or the count of them is past a
# limit. $scan remembers how far the bytes were looked at, so a head that trickles in is read
# once in all, not again from its start with every piece (that was quadratic).
sub head_ready ($buf_ref, $scan, $limits) {
    my $len = length $$buf_ref;
    if (!$scan->{line}) {
        my $eol = index $$buf_ref, "\n";
        return $len > $limits->{line} + 1 ? 1 : 0 if $eol < 0;
        @$scan{qw(line start lines)} = (1, $eol + 1, 0);
        return 1;
    }
    while ((my $eol = index $$buf_ref, "\n", $scan->{start}) >= 0) {
        my $field = $eol - $scan->{start};
        $scan->{start} = $eol + 1;
        return 1 if $field <= 1 && substr($$buf_ref, $eol - $field, $field) !~ /[^\r]/;    # The end
        return 1 if $field > $limits->{field_size} + 1 || ++$scan->{lines} > $limits->{fields};
    }
    return $len - $scan->{start} > $limits->{field_size} ? 1 : 0;
}

# How the body is framed: ('none'), ('length', N), ('chunked'), or (STATUS) when refused
sub body_framing ($env, $limits) {
    my $te = $env->{HTTP_TRANSFER_ENCODING};
    my $cl = $env->{CONTENT_LENGTH};
    if (defined $te) {
        return -_refused($env, 400, 'it has both Content-Length and Transfer-Encoding')
            if defined $cl;
        return -_refused($env, 501, 'its Transfer-Encoding is not chunked') if lc $te ne 'chunked';
        return 'chunked';
    }
    return 'none' unless defined $cl;

    # A list, even of one value repeated (two Content-Length lines): Apache refuses it, and
    # so a proxy in front and this server cannot read two lengths into one request
    return -_refused($env, 400, 'its Content-Length is a list, not one value')
        if index($cl, ',') >= 0;
    return -_refused($env, 400, 'its Content-Length is not a number') if $cl !~ /\A\d{1,18}\z/;
    return -_refused($env, 413, "its body is larger than LimitRequestBody ($limits->{body})")
        if $limits->{body} && $cl > $limits->{body};
    return $cl ? ('length', $cl + 0) : 'none';
}

# Decodes what it can of a chunked body from $buf into $out. $state remembers where it is
# between calls. Returns 1 when the body is complete, 0 for more bytes, or an error status.
sub dechunk ($buf_ref, $state, $out_ref, $limit) {
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
            return 0 if length $$buf_ref < 2 && $$buf_ref ne "\n";
            $$buf_ref =~ s/\A\r?\n// or return 400;
            $state->{crlf} = 0;
        }
        my $eol = index $$buf_ref, "\n";
        if ($eol < 0) { return length $$buf_ref > 1024 ? 400 : 0 }
        my $done = _chunk_line(substr($$buf_ref, 0, $eol + 1, ''), $state, $limit);
        return $done if defined $done;
    }
}

# A client's number, which is no cause for a perl warning however large (15 digits at most)
sub _hex ($digits) {
    no warnings 'portable';    ## no critic (ProhibitNoWarnings) the client's, not perl's
    return hex $digits;
}

# A chunk-size line or a trailer line: sets the next chunk's size, or says how the body ends
sub _chunk_line ($line, $state, $limit) {
    if ($state->{trailer}) {
        return 1 if $line =~ /\A\r?\n\z/;
        return ++$state->{trailer} > 100 ? 400 : undef;
    }
    my ($hex) = $line =~ /\A([0-9a-fA-F]{1,15})[ \t]*(?:;[^\r\n]*)?\r?\n\z/ or return 400;
    my $size = _hex($hex);
    if (!$size) { $state->{trailer} = 1; return }
    return 413 if $limit && ($state->{total} // 0) + $size > $limit;
    $state->{left} = $size;
    return;
}

sub _field_limits ($head, $limits) {
    my @lines = grep {length} split /\r?\n/, $head;
    return (431, "it has more header fields than LimitRequestFields ($limits->{fields})")
        if @lines > $limits->{fields};
    for (@lines) {
        return (431, "a header field is longer than LimitRequestFieldSize ($limits->{field_size})")
            if length > $limits->{field_size};
    }
    return;
}

1;

__END__

=head1 NAME

Perennial::HTTP::Request - judge the bytes of an HTTP/1.x request

=head1 SYNOPSIS

    use Perennial::HTTP::Request qw(body_framing dechunk parse_head);
    my $len = parse_head(\$buf, \%env, {line => 8190, fields => 100, field_size => 8190});
    my ($kind, $length) = body_framing(\%env, {body => 1 << 30});

=head1 DESCRIPTION

Parses a request head with L<HTTP::Parser::XS> into PSGI keys and enforces Apache's
LimitRequestLine (414), LimitRequestFields and LimitRequestFieldSize (431). Header lines that
are not C<name: value> (a space in the name, obsolete folding), a missing or repeated Host in
HTTP/1.1, both Content-Length and Transfer-Encoding, and a list of Content-Length values
(even one value twice, as Apache) are refused with 400, so that no request can be smuggled
past a proxy in front.

=head1 FUNCTIONS

=head2 body_framing

    my ($kind, $length) = body_framing($env, {body => $limit});

Returns C<none>, C<length> and the length, C<chunked>, or an error status (400, 413, 501).

=head2 dechunk

    my $done = dechunk(\$buf, \%state, \$body, $limit);

Moves decoded chunk data from C<$buf> to the end of C<$body> and counts it in
C<< $state->{total} >> (the caller may empty C<$body> between calls). Returns 1 at the end of
the body, 0 when it needs more bytes, or 400 or 413.

=head2 parse_head

    my $len = parse_head(\$buf, \%env, $limits);

Returns the head's length in bytes, 0 when the head is incomplete, or minus an error status
(-400, -414, -431, -505). C<PATH_INFO> comes out decoded and without dot segments; a path whose
C<..> would climb above C</> is -400, with the reason in C<< $env->{'perennial.refused'} >>.

=head2 head_ready

    my %scan;
    my $len = head_ready(\$buf, \%scan, $limits) ? parse_head(\$buf, \%env, $limits) : 0;

True when the bytes so far are worth a parse: the request line is complete (the first time),
the head is, or a line or the number of lines is past its limit. Each byte is looked at once.

=head2 without_dot_segments

    without_dot_segments('/a/./b/../c');    # /a/c
    without_dot_segments('/../etc');        # undef: above the root
    without_dot_segments('/../etc', 1);     # /etc: stopped at the root

=cut
