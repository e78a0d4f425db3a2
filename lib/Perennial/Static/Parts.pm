package Perennial::Static::Parts;
use v5.36;
use Fcntl qw(SEEK_SET);

# A PSGI body that reads only the ranges: [text before, offset, length] for each part

sub new ($class, $fh, $parts) { bless {fh => $fh, parts => [@$parts], left => 0}, $class }

sub getline ($self) {
    my $out = '';
    while (!$self->{left}) {
        my $part = shift @{$self->{parts}} or return length $out ? $out : undef;
        $out .= $part->[0] // '';
        next unless $part->[2];
        sysseek($self->{fh}, $part->[1], SEEK_SET) or return;
        $self->{left} = $part->[2];
    }
    my $want = $self->{left} < 65_536 ? $self->{left} : 65_536;
    my $buf;
    my $got = sysread $self->{fh}, $buf, $want;
    return length $out ? $out : undef unless $got;
    $self->{left} -= $got;
    return $out . $buf;
}

sub close ($self) { close $self->{fh} }

1;

__END__

=head1 NAME

Perennial::Static::Parts - a PSGI body of parts of a file, each after a text of its own

=head1 SYNOPSIS

    my $body = Perennial::Static::Parts->new($fh, [[$text_before, $offset, $length], ...]);
    while (defined(my $chunk = $body->getline)) { ... }

=head1 DESCRIPTION

Reads only the given byte ranges of an open file, in blocks of at most 64 KB, each after its
own text (the part headers of multipart/byteranges, or nothing).

=head1 METHODS

=head2 new

    my $body = Perennial::Static::Parts->new($fh, \@parts);

=head2 getline

    my $chunk = $body->getline;    # undef at the end

=head2 close

    $body->close;

=cut
