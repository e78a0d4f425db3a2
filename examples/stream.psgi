# A streamed response: no Content-Length, so HTTP/1.1 clients get it chunked. ?lines=N asks for
# N lines (5 by default), written a thousand at a time: 2000000 make about 25 MB, enough to
# see a slow reader's rest go to the parking process (README, "Idle clients")
use v5.36;

sub ($env) {
    my ($lines) = ($env->{QUERY_STRING} // '') =~ /\blines=(\d+)/;
    $lines //= 5;
    return sub ($respond) {
        my $writer = $respond->([200, ['Content-Type' => 'text/plain']]);
        for (my $from = 1; $from <= $lines; $from += 1000) {
            my $to = $from + 999 < $lines ? $from + 999 : $lines;
            $writer->write(join '', map {"line $_\n"} $from .. $to);
        }
        $writer->close;
    };
};
