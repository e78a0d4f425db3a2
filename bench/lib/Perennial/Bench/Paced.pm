package Perennial::Bench::Paced;
use v5.36;
use Exporter qw(import);
use IO::Select;
use IO::Socket::IP;
use Time::HiRes ();

# Clients that come back at a steady pace, as browsers on a site do: each makes a request every
# `interval` seconds for `seconds`, on a connection of its own that it keeps alive (or a new
# connection for each request, keepalive => 0), and measures the wait from the moment it meant
# to send to the first byte of the answer. One process, one select loop; it stops by itself at
# the end of `seconds`, and a request still unanswered then counts with the wait it had so far.

our @EXPORT_OK = qw(run_paced);

# port, path, clients, interval, seconds, keepalive: {waits => [seconds ...] (one a request),
# slow_clients => how many waited over a second at least once, requests (answered), failed
# (the connection ended before the answer), unanswered}
sub run_paced (%a) {
    my $start   = Time::HiRes::time();
    my $end     = $start + $a{seconds};
    my @clients = map { {due => $start + $a{interval} * $_ / $a{clients}} } 0 .. $a{clients} - 1;
    my %by_fd;
    my $select = IO::Select->new;
    my %sum    = (waits => [], requests => 0, failed => 0, unanswered => 0);
    my $head   = "GET $a{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        . ($a{keepalive} ? '' : "Connection: close\r\n") . "\r\n";

    while ((my $now = Time::HiRes::time()) < $end) {
        for my $c (grep { !$_->{asked} && $_->{due} <= $now } @clients) {
            _send($c, \%a, $head, $select, \%by_fd, \%sum) or next;
        }
        my $next = $end;
        $next = $_->{due} < $next ? $_->{due} : $next for grep { !$_->{asked} } @clients;
        my $wait = $next - Time::HiRes::time();
        $wait = 0.001 if $wait < 0.001;
        for my $fh ($select->can_read($wait)) {
            _read($by_fd{fileno $fh}, \%a, $select, \%by_fd, \%sum);
        }
    }
    my $now = Time::HiRes::time();
    for my $c (grep { $_->{asked} } @clients) {
        _note_wait($c, $now - $c->{due}, \%sum) unless $c->{first};
        $sum{unanswered}++;
    }
    _close($_, $select, \%by_fd) for @clients;
    $sum{slow_clients} = grep { $_->{slow} } @clients;
    return \%sum;
}

# A request goes out (on a new connection when it has none): false when it could not connect
sub _send ($c, $a, $head, $select, $by_fd, $sum) {
    if (!$c->{sock}) {
        $c->{sock} = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $a->{port})
            or do { $sum->{failed}++; $c->{due} += $a->{interval}; return 0 };
        $select->add($c->{sock});
        $by_fd->{fileno $c->{sock}} = $c;
    }
    @$c{qw(asked first buf)} = (1, 0, '');
    return 1 if defined syswrite($c->{sock}, $head);
    $sum->{failed}++;
    _close($c, $select, $by_fd);
    _next($c, $a);
    return 0;
}

sub _read ($c, $a, $select, $by_fd, $sum) {
    my $n = sysread($c->{sock}, $c->{buf}, 65_536, length $c->{buf});
    if (!$n) {    # The server closed: while a request waited, that is a failure
        if ($c->{asked}) { $sum->{failed}++; _next($c, $a) }
        return _close($c, $select, $by_fd);
    }
    if (!$c->{first}) {
        $c->{first} = 1;
        _note_wait($c, Time::HiRes::time() - $c->{due}, $sum);
    }
    my $end = index($c->{buf}, "\r\n\r\n");
    return if $end < 0;
    my ($length) = substr($c->{buf}, 0, $end) =~ /^Content-Length:\s*(\d+)/mi;
    return if !defined $length || length($c->{buf}) < $end + 4 + $length;
    $sum->{requests}++;
    my $close = !$a->{keepalive} || substr($c->{buf}, 0, $end) =~ /^Connection:\s*close/mi;
    _close($c, $select, $by_fd) if $close;
    _next($c, $a);
}

sub _note_wait ($c, $wait, $sum) {
    push @{$sum->{waits}}, $wait;
    $c->{slow} = 1 if $wait > 1;
}

# The next request is due an interval after this one was, or now when that is past
sub _next ($c, $a) {
    $c->{asked} = 0;
    $c->{due} += $a->{interval};
    my $now = Time::HiRes::time();
    $c->{due} = $now if $c->{due} < $now;
}

sub _close ($c, $select, $by_fd) {
    my $sock = delete $c->{sock} or return;
    delete $by_fd->{fileno $sock};
    $select->remove($sock);
    close $sock;
    return;
}

1;

__END__

=head1 NAME

Perennial::Bench::Paced - clients that each make a request at a steady pace

=head1 SYNOPSIS

    my $r = run_paced(port => $port, path => '/', clients => 50, interval => 0.1,
        seconds => 20, keepalive => 1);
    # $r->{waits} (seconds to the first byte, one a request), slow_clients, requests, failed

=cut
