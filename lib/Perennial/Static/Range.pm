package Perennial::Static::Range;
use v5.36;
use HTTP::Date ();
use Perennial::Static::Parts;

# Range requests on a file (RFC 9110 section 14): one range gives 206 with Content-Range,
# several give multipart/byteranges, none satisfiable gives 416. A Range header that is not
# `bytes=...` or does not parse is ignored, and so is one whose If-Range does not match.

my $MAX_RANGES = 200;    # Apache's MaxRanges default

# undef: send the whole file; 416: nothing satisfiable; else [[first, last], ...]
sub parse ($class, $env, $size, $etag, $modified) {
    my $header = $env->{HTTP_RANGE} // return;
    return if $env->{REQUEST_METHOD} ne 'GET';
    if (defined(my $if = $env->{HTTP_IF_RANGE})) {
        return if $if =~ /\A\s*"/ ? $if !~ /\A\s*\Q$etag\E\s*\z/ : $if ne $modified;
    }
    my ($list) = $header =~ /\A\s*bytes\s*=\s*(.+?)\s*\z/i or return;
    my @ranges;
    for my $spec (split /\s*,\s*/, $list) {
        my $range = _one($spec, $size) // return;
        push @ranges, $range if @$range;
    }
    return 416 unless @ranges;
    return if @ranges > $MAX_RANGES;
    return _merged(\@ranges);
}

# One first-last, first- or -suffix: [first, last], [] when it lies past the end, undef when
# it does not parse
sub _one ($spec, $size) {
    my ($first, $last) = $spec =~ /\A(\d*)\s*-\s*(\d*)\z/ or return;
    return if $first eq '' && $last eq '';
    if ($first eq '') {
        return [] if $last == 0;
        return [$size > $last ? $size - $last : 0, $size - 1];
    }
    return    if length $last && $last < $first;
    return [] if $first >= $size;
    return [$first, $last eq '' || $last >= $size ? $size - 1 : $last];
}

# Overlapping and adjacent ranges become one, as Apache merges them
sub _merged ($ranges) {
    my @sorted = sort { $a->[0] <=> $b->[0] } @$ranges;
    my @out    = ([@{shift @sorted}]);
    for my $r (@sorted) {
        if ($r->[0] <= $out[-1][1] + 1) { $out[-1][1] = $r->[1] if $r->[1] > $out[-1][1] }
        else                            { push @out, [@$r] }
    }
    return \@out;
}

sub response ($class, $fh, $size, $ranges, $headers, $type) {
    my @head = @$headers;
    if (@$ranges == 1) {
        my ($first, $last) = @{$ranges->[0]};
        return [
            206,
            [   @head,
                'Content-Range'  => "bytes $first-$last/$size",
                'Content-Length' => $last - $first + 1
            ],
            Perennial::Static::Parts->new($fh, [[undef, $first, $last - $first + 1]])
        ];
    }
    my $boundary = sprintf '%x%x', time, $$ ^ int rand 0x7fffffff;
    my (@parts, $length);
    for my $r (@$ranges) {
        my $part
            = "\r\n--$boundary\r\n"
            . (length $type ? "Content-Type: $type\r\n" : '')
            . "Content-Range: bytes $r->[0]-$r->[1]/$size\r\n\r\n";
        push @parts, [$part, $r->[0], $r->[1] - $r->[0] + 1];
        $length += length($part) + $r->[1] - $r->[0] + 1;
    }
    my $end = "\r\n--$boundary--\r\n";
    push @parts, [$end, 0, 0];
    @head = grep {defined} map { lc $head[$_] eq 'content-type' ? () : @head[$_, $_ + 1] }
        grep { !($_ % 2) } 0 .. $#head;
    return [
        206,
        [   @head,
            'Content-Type'   => "multipart/byteranges; boundary=$boundary",
            'Content-Length' => $length + length $end
        ],
        Perennial::Static::Parts->new($fh, \@parts)
    ];
}

1;

__END__

=head1 NAME

Perennial::Static::Range - byte ranges of a file: 206, multipart/byteranges, 416

=head1 SYNOPSIS

    my $ranges = Perennial::Static::Range->parse($env, $size, $etag, $last_modified);
    return Perennial::Static::Range->response($fh, $size, $ranges, \@headers, $type) if ref $ranges;

=head1 DESCRIPTION

Reads C<Range: bytes=...> (first-last, first-, -suffix, several separated by commas) for a
GET, honours C<If-Range> (an ETag or the exact Last-Modified date), merges overlapping ranges
and answers one range with 206 and C<Content-Range>, several with C<multipart/byteranges>. A
header that does not parse, or with more than 200 ranges, is ignored (the whole file is sent);
when no range can be satisfied, C<parse> returns 416.

=head1 METHODS

=head2 parse

    my $ranges = Perennial::Static::Range->parse($env, $size, $etag, $modified);

=head2 response

    my $res = Perennial::Static::Range->response($fh, $size, $ranges, \@headers, $type);

=cut
