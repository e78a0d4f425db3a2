package Perennial::HTTP::ReadTimeout;
use v5.36;
use Exporter qw(import);

# mod_reqtimeout's RequestReadTimeout: how long a request's head, and then its body, may take to
# arrive. Each stage has a first limit, extended by a second for every MinRate bytes received,
# up to its maximum when it has one: header=20-40,MinRate=500 gives a head 20 seconds, 21 once
# 500 bytes came, and never more than 40. A client that trickles its request (slowloris) is cut
# with 408, however often it sends a byte.

our @EXPORT_OK = qw(read_deadline read_timeouts parse_read_timeout);

# Apache 2.4's defaults (mod_reqtimeout is loaded by Debian's Apache)
my %DEFAULT = (
    header => {first => 20, max => 40, rate => 500},
    body   => {first => 20, max => 0,  rate => 500},
);

# The limits in force: Apache's defaults, then each layer's stages (the main server's, a virtual
# host's), a stage a layer does not name kept from the one before
sub read_timeouts (@layers) {
    my %out = %DEFAULT;
    %out = (%out, %$_) for grep {defined} @layers;
    return \%out;
}

# The directive's words onto {header => {first, max, rate}, body => ...}: the stages it names
# over those of $base (an earlier line's), or (undef, why). A stage with 0 has no limit of its
# own (Timeout alone bounds it); handshake= is TLS's, which Perennial does not speak, and is
# accepted and ignored.
sub parse_read_timeout ($words, $base = {}) {
    my %out = map { $_ => {%{$base->{$_}}} } keys %$base;
    for my $word (@$words) {
        my ($stage, $first, $max, $rate)
            = $word =~ /\A(handshake|header|body)=(\d+)(?:-(\d+))?(?:,minrate=(\d+))?\z/i
            or return (
            undef,
            "'$word' is not header=, body= or handshake= with SECONDS[-MAXSECONDS][,MinRate=BYTES]"
            );
        $stage = lc $stage;
        next if $stage eq 'handshake';
        return (undef, "'$word': the maximum is below the first limit")
            if defined $max && $max < $first;
        return (undef, "'$word': a maximum needs MinRate, or the limit would never grow")
            if defined $max && !$rate;
        $out{$stage} = {first => $first + 0, max => ($max // 0) + 0, rate => ($rate // 0) + 0};
    }
    return \%out;
}

# When a stage that began at $start must be over, with $bytes received so far; undef when it
# has no limit
sub read_deadline ($stage, $start, $bytes) {
    return unless $stage->{first};
    my $seconds = $stage->{first} + ($stage->{rate} ? $bytes / $stage->{rate} : 0);
    $seconds = $stage->{max} if $stage->{max} && $seconds > $stage->{max};
    return $start + $seconds;
}

1;

__END__

=head1 NAME

Perennial::HTTP::ReadTimeout - mod_reqtimeout's limits on reading a request

=head1 SYNOPSIS

    use Perennial::HTTP::ReadTimeout qw(parse_read_timeout read_deadline);
    my ($limits, $why) = parse_read_timeout(['header=20-40,MinRate=500', 'body=20,MinRate=500']);
    my $until = read_deadline($limits->{header}, $accepted_at, length $bytes_so_far);

=head1 DESCRIPTION

C<RequestReadTimeout> as Apache's mod_reqtimeout has it: for the head (C<header>) and the body
(C<body>), a first limit in seconds, extended by one second for every C<MinRate> bytes
received, up to a maximum when one is given. The defaults are Apache 2.4's,
C<header=20-40,MinRate=500 body=20,MinRate=500>; a stage set to 0 has no limit of its own and
C<Timeout> alone bounds each read. C<handshake=> (TLS) is accepted and ignored.

=cut
