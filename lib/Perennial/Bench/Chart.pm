package Perennial::Bench::Chart;
use v5.36;
use Exporter                qw(import);
use Perennial::Status::HTML qw(escape);

# An SVG chart of one series: requests per second (left axis, solid) and mean latency (right
# axis, dashed) against the varied setting, with the knee marked. Written by hand: a few
# lines of SVG need no library.

our @EXPORT_OK = qw(svg);

my ($W, $H, $LEFT, $RIGHT, $TOP, $BOTTOM) = (760, 400, 70, 70, 50, 60);

sub svg ($series, %opt) {
    my @p    = @{$series->{points}};
    my $knee = $opt{knee};
    my $pw   = $W - $LEFT - $RIGHT;
    my $ph   = $H - $TOP - $BOTTOM;
    my $xs   = sub ($i) { $LEFT + (@p == 1 ? $pw / 2 : $pw * $i / $#p) };
    my $rmax = _nice(_max(map { $_->{rps}       // 0 } @p));
    my $lmax = _nice(_max(map { $_->{avg_ms}    // 0 } @p));
    my $ry   = sub ($v) { $TOP + $ph * (1 - ($v // 0) / $rmax) };
    my $ly   = sub ($v) { $TOP + $ph * (1 - ($v // 0) / $lmax) };
    my $out
        = qq{<svg xmlns="http://www.w3.org/2000/svg" width="$W" height="$H" viewBox="0 0 $W $H" }
        . qq{font-family="DejaVu Sans, sans-serif" font-size="12">\n}
        . qq{<rect width="$W" height="$H" fill="#fff"/>\n}
        . sprintf(qq{<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>\n},
        $LEFT, escape($opt{title} // "Throughput and latency against $series->{x}"))
        . sprintf(qq{<text x="%d" y="40" fill="#555">%s</text>\n}, $LEFT, escape($series->{name}));

    # Axes, grid and labels
    for my $t (0 .. 4) {
        my $y = $TOP + $ph * $t / 4;
        $out .= qq{<line x1="$LEFT" y1="$y" x2="@{[$LEFT + $pw]}" y2="$y" stroke="#e4e4e4"/>\n};
        $out .= sprintf qq{<text x="%d" y="%.1f" text-anchor="end" fill="#1f5fa8">%s</text>\n},
            $LEFT - 6, $y + 4, _num($rmax * (1 - $t / 4));
        $out .= sprintf qq{<text x="%d" y="%.1f" fill="#b5471b">%s</text>\n},
            $LEFT + $pw + 6, $y + 4, _num($lmax * (1 - $t / 4));
    }
    $out
        .= sprintf
        qq{<text transform="translate(16,%d) rotate(-90)" text-anchor="middle" fill="#1f5fa8">requests/s</text>\n},
        $TOP + $ph / 2;
    $out
        .= sprintf
        qq{<text transform="translate(%d,%d) rotate(90)" text-anchor="middle" fill="#b5471b">mean latency, ms</text>\n},
        $W - 16, $TOP + $ph / 2;
    for my $i (0 .. $#p) {
        $out .= sprintf qq{<text x="%.1f" y="%d" text-anchor="middle">%s</text>\n},
            $xs->($i), $TOP + $ph + 18, escape($p[$i]{x});
    }
    $out .= sprintf qq{<text x="%d" y="%d" text-anchor="middle">%s</text>\n}, $LEFT + $pw / 2,
        $H - 14, escape($series->{x});

    # The knee, then the two curves over it
    if (defined $knee) {
        my $x = $xs->($knee);
        $out
            .= sprintf
            qq{<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333" stroke-dasharray="2 4"/>\n},
            $x, $TOP, $x, $TOP + $ph;
        $out
            .= sprintf
            qq{<text x="%.1f" y="%d" text-anchor="middle" font-weight="bold">knee: %s %s</text>\n},
            $x, $TOP - 4, escape($series->{x}), escape($p[$knee]{x});
    }
    $out .= _line([map { [$xs->($_), $ry->($p[$_]{rps})] } 0 .. $#p], '#1f5fa8', '');
    $out .= _line([map { [$xs->($_), $ly->($p[$_]{avg_ms})] } 0 .. $#p],
        '#b5471b', ' stroke-dasharray="6 4"');
    return "$out</svg>\n";
}

sub _line ($pts, $colour, $dash) {
    my $d   = join ' ', map { sprintf '%.1f,%.1f', @$_ } @$pts;
    my $out = qq{<polyline points="$d" fill="none" stroke="$colour" stroke-width="2"$dash/>\n};
    $out .= sprintf qq{<circle cx="%.1f" cy="%.1f" r="3.5" fill="$colour"/>\n}, @$_ for @$pts;
    return $out;
}

sub _max (@v) {
    my ($m) = sort { $b <=> $a } @v;
    return $m || 1;
}

# A round axis top above the largest value: 1, 2 or 5 times a power of ten
sub _nice ($v) {
    my $p = 10**int(log($v) / log(10));
    for my $m (1, 2, 5, 10) { return $m * $p if $m * $p >= $v }
    return 10 * $p;
}

sub _num ($v) { $v >= 100 ? sprintf('%d', $v) : sprintf('%.3g', $v) }

1;

__END__

=head1 NAME

Perennial::Bench::Chart - throughput and latency against a setting, as SVG

=head1 SYNOPSIS

    my ($s) = series($results);
    print {$fh} svg($s, knee => knee($s->{points}), title => 'MaxClients on heavy.pl');

=head1 FUNCTIONS

=head2 svg

Requests per second on the left axis (solid, blue), mean latency in milliseconds on the right
(dashed), the varied setting along the bottom, and a dotted line at the knee.

=cut
