package Perennial::HTTP::Refused;
use v5.36;
use Exporter                 qw(import);
use Perennial::HTTP::Request qw(head_ready parse_head);
use Perennial::Log::Format   ();

# A request head judged by the Perl, and what the logs and the scoreboard say of one that was
# refused or did not come whole: the request line as it was sent, and the reason

our @EXPORT_OK = qw(head_failed judged_head name_refused refusal_line request_of);

# The Perl judge of the head in $buf: its length when it is whole and good, (0, status) when it
# is refused, () while more is needed (when head_ready says a look is worth it, each byte
# looked at once)
sub judged_head ($buf_ref, $env, $scan_ref, $limits) {
    my $ready
        = $$scan_ref
        ? head_ready($buf_ref, $$scan_ref, $limits)
        : index($$buf_ref, "\r\n\r\n") >= 0 || head_ready($buf_ref, $$scan_ref = {}, $limits);
    my $len = $ready ? parse_head($buf_ref, $env, $limits) : 0;
    return $len if $len > 0;
    return ()   if !$len;
    name_refused($env, $buf_ref);
    return (0, -$len);
}

# A head that did not come whole: the client closed after part of it (400), or it did not
# arrive within the time $limit allows (408: RequestReadTimeout, or Timeout for one read)
sub head_failed ($env, $base, $peer, $buf_ref, $status, $limit) {
    $env //= {%$base, %$peer};
    my $bytes = length $$buf_ref;
    $env->{'perennial.refused'}
        = $status == 408
        ? "its head is incomplete after $limit ($bytes bytes came)"
        : "its head is incomplete: the client ended the connection after $bytes bytes";
    name_refused($env, $buf_ref);
    return (0, $status, $env);
}

# A refused head may not have parsed: the log and the scoreboard show what was sent
sub name_refused ($env, $buf_ref) {
    my ($line) = $$buf_ref =~ /\A([^\r\n]{0,200})/;
    $env->{'perennial.line'} = $line // '';
    my ($method, $uri, $proto) = split ' ', $line // '';
    $env->{REQUEST_METHOD} //= $method // '-';
    $env->{REQUEST_URI}    //= $uri    // '-';
    $env->{SERVER_PROTOCOL}
        //= defined $proto && $proto =~ m{\AHTTP/1\.[01]\z} ? $proto : 'HTTP/1.0';
    return;
}

# A refusal's log line: the rule ($why, and the reason the judge gave), the status, the request
# line as sent, the client, the bytes that broke the rule (escaped as the access log escapes a
# client's bytes)
sub refusal_line ($why, $status, $env) {
    $why .= ", $env->{'perennial.refused'}" if defined $env->{'perennial.refused'};
    my $bytes = $env->{'perennial.offending'};
    $bytes = Perennial::Log::Format::clean($bytes) if defined $bytes;
    return "$why: $status (request '"
        . ($env->{'perennial.line'}
            // "$env->{REQUEST_METHOD} $env->{REQUEST_URI} " . $env->{SERVER_PROTOCOL})
        . "', client "
        . ($env->{REMOTE_ADDR} // 'unix socket')
        . (defined $bytes ? ", sent '$bytes'" : '') . ')';
}

# The request and its client, as log lines name them
sub request_of ($env) {
    return "request $env->{REQUEST_METHOD} $env->{REQUEST_URI}, client "
        . ($env->{REMOTE_ADDR} // 'unix socket');
}

1;

__END__

=head1 NAME

Perennial::HTTP::Refused - a request head judged in Perl, and how a refused one is named

=head1 SYNOPSIS

    use Perennial::HTTP::Refused qw(judged_head refusal_line);
    my ($len, $status) = judged_head(\$buf, $env, \my $scan, $limits);
    $log->warn(refusal_line('bad request', $status, $env)) if $status;

=head1 DESCRIPTION

The connection loop's Perl side of a request head (L<Perennial::Connection>): the judge
(L<Perennial::HTTP::Request>) asked when a look is worth it, and, for a head that is refused
or never comes whole, the environment keys the access log, the scoreboard and the error log
read (C<perennial.line>, the request line as it was sent; C<perennial.refused>, the reason;
the method, target and protocol it seems to have).

=head1 FUNCTIONS

=head2 judged_head

    my ($len, $status) = judged_head(\$buf, $env, \$scan, $limits);

The head's length when it is whole and good; C<(0, $status)> when it is refused; the empty
list while more is needed.

=head2 head_failed

    my (undef, $status, $env) = head_failed($env, $base, $peer, \$buf, 408, 'Timeout');

A head that did not come whole: its environment (made from the listener's and the
connection's keys when there is none yet) says why, and the status comes back.

=head2 name_refused

    name_refused($env, \$buf);

The request line as it was sent, and the method, target and protocol it seems to have, for a
head that may not have parsed.

=head2 refusal_line

    my $line = refusal_line($why, $status, $env);

The error log's line for a refusal.

=head2 request_of

    my $words = request_of($env);    # "request GET /, client 127.0.0.1"

=cut
