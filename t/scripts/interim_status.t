use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(raw_request);
use Perennial::Test::Scripts qw(start_script_server);

# A script's Status that cannot end a response (1xx is interim: a client would read the next
# response, the next request's, as this one's) is refused in every mode: a 500 and an error
# line, and the request after it on the connection gets its own answer
my $srv = start_script_server();
for my $mode (qw(cgi-bin perlrun registry)) {
    for my $status ('100+Continue', '101', '199') {
        my $out = raw_request($srv->port,
                  "GET /$mode/status_asked.pl?$status HTTP/1.1\r\nHost: x\r\n\r\n"
                . "GET /$mode/status_asked.pl?201 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        );
        my @lines = $out =~ m{^(HTTP/1\.1 \d+)}mg;
        is_deeply \@lines, ['HTTP/1.1 500', 'HTTP/1.1 201'],
            "/$mode, Status $status: 500, then the next request's own 201";
    }
}

# An nph- script writes its own bytes: an interim line, then its final response, pass through
for my $mode (qw(cgi-bin perlrun registry)) {
    my $out = raw_request($srv->port,
        "GET /$mode/nph-interim.pl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is $out,
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfinal\n",
        "/$mode, an nph- script's interim line and final response, as it wrote them";
}

like $srv->error_log, qr{status_asked\.pl.*bad Status header from script: '100 Continue'},
    'the error log names the script and the Status';
$srv->stop;
done_testing;
