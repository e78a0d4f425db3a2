package Perennial::Bench::Attack;
use v5.36;
use Exporter qw(import);
use IO::Select;
use IO::Socket::IP;
use POSIX       ();
use Time::HiRes ();

# The clients that hold a prefork server's workers without asking much of it, for a bounded time
# in a process of their own: slowloris (a connection that sends a request head a byte every few
# seconds, and opens another when the server closes it) and slow readers (a connection that asks
# for a large response and reads a kilobyte of it a second). And the normal client measured
# beside them: sequential requests, each on a new connection, timed to the last byte.

our @EXPORT_OK = qw(start_attack stop_attack time_requests);

# port; slowloris (connections), every (seconds between a slowloris's bytes); readers, path
# (of the large response), read_rate (bytes a second each); seconds. Returns the process.
sub start_attack (%a) {
    my $pid = fork // die "Can't fork: $!\n";
    return $pid if $pid;
    my $end = Time::HiRes::time() + $a{seconds};
    my @conns;
    my $select = IO::Select->new;
    my $open   = sub ($kind) {
        my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $a{port}, Blocking => 0)
            or return;
        push @conns, {sock => $sock, kind => $kind, next => Time::HiRes::time(), sent => 0};
        $select->add($sock);
    };
    $open->('slow')   for 1 .. $a{slowloris};
    $open->('reader') for 1 .. $a{readers};
    my $head  = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" . ('X-Wait: a' . "\r\n") x 1000;
    my $chunk = int($a{read_rate} / 10) || 1;
    while ((my $now = Time::HiRes::time()) < $end) {
        for my $c (@conns) {
            next if !$c->{sock} || $c->{next} > $now;
            if ($c->{kind} eq 'slow') {
                my $byte = substr($head, $c->{sent}++ % length $head, 1);
                $c->{next} = $now + $a{every};
                next if defined syswrite($c->{sock}, $byte) || $!{EAGAIN} || $!{EINPROGRESS};
            }
            else {
                if (!$c->{asked}) {
                    $c->{asked}
                        = defined syswrite($c->{sock}, "GET $a{path} HTTP/1.1\r\nHost: x\r\n\r\n");
                    $c->{next} = $now + 0.1;
                    next;
                }
                $c->{next} = $now + 0.1;
                my $n = sysread($c->{sock}, my $buf, $chunk);
                next if $n || (!defined $n && $!{EAGAIN});
            }
            $select->remove($c->{sock});    # The server closed it: another takes its place
            close delete $c->{sock};
            $open->($c->{kind});
        }
        @conns = grep { $_->{sock} } @conns;
        Time::HiRes::sleep(0.01);
    }
    POSIX::_exit(0);
}

# A response in hand to its last byte, by its Content-Length (a server may keep the connection
# open whatever the request said: uWSGI's HTTP/1.1 socket does)
sub _whole ($out) {
    my $end = index($out, "\r\n\r\n");
    return 0 if $end < 0;
    my ($length) = substr($out, 0, $end) =~ /^Content-Length:\s*(\d+)/mi;
    return defined $length && length($out) >= $end + 4 + $length;
}

sub stop_attack ($pid) {
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

# Sequential requests for $seconds, each on a new connection: the seconds each took to its last
# byte (one that got no whole answer within $limit counts as $limit), and how many failed
sub time_requests ($port, $path, $seconds, $limit = 10) {
    my ($end, @took, $failed) = (Time::HiRes::time() + $seconds);
    $failed = 0;
    while (Time::HiRes::time() < $end) {
        my $t0 = Time::HiRes::time();
        my $sock
            = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port, Timeout => $limit);
        my $out = '';
        if ($sock) {
            $sock->syswrite("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            while (Time::HiRes::time() - $t0 < $limit && !_whole($out)) {
                my $rin = '';
                vec($rin, fileno $sock, 1) = 1;
                select(my $r = $rin, undef, undef, 0.1)   or next;
                sysread($sock, $out, 65_536, length $out) or last;
            }
        }
        my $ok = $out =~ m{\AHTTP/1\.[01] 200 };
        $failed++ unless $ok;
        push @took, $ok ? Time::HiRes::time() - $t0 : $limit;
    }
    return (\@took, $failed);
}

1;

__END__

=head1 NAME

Perennial::Bench::Attack - slowloris, slow readers, and a normal client timed beside them

=head1 SYNOPSIS

    my $pid = start_attack(port => $port, slowloris => 300, every => 5, readers => 50,
        path => '/big', read_rate => 1024, seconds => 30);
    my ($took, $failed) = time_requests($port, '/', 30);
    stop_attack($pid);

=cut
