use v5.36;

# Forty-eight megabytes: more than the kernel's socket buffers on loopback hold, with room to
# spare; as one array (/), streamed through the writer in 64 KiB pieces (/stream), or as a body
# with getline (/lines). Each 64 KiB piece of a stream is its number, eight digits, over and over,
# so that a client can tell a piece lost or out of place; ?mb=N asks for N megabytes.
my $body = 'x' x (48 << 20);

my $piece = sub ($i) { sprintf("%08d", $i) x 8192 };

package Pieces {
    sub new ($class, $count) { bless {at => 0, count => $count}, $class }
    sub getline ($self)      { $self->{at} < $self->{count} ? $piece->($self->{at}++) : undef }
    sub close ($self)        { }
}

sub ($env) {
    my ($mb) = ($env->{QUERY_STRING} // '') =~ /\bmb=(\d+)/;
    my $count = ($mb // 48) * 16;
    return [200, ['Content-Type' => 'text/plain'], [$body]] if $env->{PATH_INFO} !~ m{/(stream|lines)\z};
    return [200, ['Content-Type' => 'text/plain'], Pieces->new($count)] if $1 eq 'lines';
    return sub ($respond) {
        my $w = $respond->([200, ['Content-Type' => 'text/plain']]);
        $w->write($piece->($_)) for 0 .. $count - 1;
        $w->close;
    };
};
