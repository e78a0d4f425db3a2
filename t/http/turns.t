use v5.36;
use lib 't/lib';
use Test::More;
use File::Spec;
use Perennial::HTTP::Core ();
use Perennial::Test       qw(raw_request start_server wait_until);

# One connection's requests, pipelined in one write, where the loop in C (xs/Loop.c) and the
# Perl loop take turns: the C serves a plain head without a body whose answer is an array, and
# gives the rest to the Perl (a body, OPTIONS *, a target the Perl judge reads, a streaming or
# handle body, cleanup handlers, an application that dies); a delayed response's whole answer
# the C writes too, from a responder of its own. Every answer comes, in order, on
# the one connection, and what each request leaves (the buffer's next request, the
# scoreboard's counts, the access log) is there for the next. With and without an access log:
# the C writes a request's counts itself only when there is none.

# The responses in $out, in order: [status, {headers}, body]; $no_body says which have none
# (the answers to HEAD); and what was left after them
sub responses_of ($out, @no_body) {
    my @got;
    while ($out =~ s{\AHTTP/1\.[01] (\d{3}) [^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n}{}) {
        my ($status, %h) = ($1);
        for (split /\r\n/, $2) {
            my ($name, $value) = split /:\s*/, $_, 2;
            $h{lc $name} = $value;
        }
        my $body = '';
        if    (shift @no_body)               { }
        elsif (defined $h{'content-length'}) { $body = substr $out, 0, $h{'content-length'}, '' }
        elsif (($h{'transfer-encoding'} // '') eq 'chunked') {
            my $ended;
            while ($out =~ s/\A([0-9a-f]+)\r\n//i) {
                my $size = hex $1;
                $body .= substr $out, 0, $size, '';
                $out =~ s/\A\r\n//;
                last if $ended = !$size;
            }
            $body = "(no last chunk) $body" unless $ended;
        }
        push @got, [$status, \%h, $body];
    }
    return (\@got, $out);
}

# The requests served on the one worker so far (the scoreboard's count)
sub served ($srv) {
    my $sum = 0;
    $sum += $_->{requests} for $srv->slots;
    return $sum;
}

my @asked = (
    ["GET /a HTTP/1.1\r\nHost: x\r\n\r\n",                            "GET /a  0\n"],
    ["POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "POST /b  5\n"],
    ["GET /c?stream HTTP/1.1\r\nHost: x\r\n\r\n",                     "GET /c stream 0\n"],
    ["OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",                         ''],
    ["HEAD /e HTTP/1.1\r\nHost: x\r\n\r\n",                           ''],
    ["GET http://x/f HTTP/1.1\r\nHost: x\r\n\r\n",                    "GET /f  0\n"],
    ["GET /g?handle HTTP/1.1\r\nHost: x\r\n\r\n",                     "GET /g handle 0\n"],
    ["GET /h?cleanup HTTP/1.1\r\nHost: x\r\n\r\n",                    "GET /h cleanup 0\n"],
    ["GET /i HTTP/1.1\r\nHost: x\r\n\r\n",                            "GET /i  0\n"],
    ["GET /l?later HTTP/1.1\r\nHost: x\r\n\r\n",                      "GET /l later 0\n"],
    ["GET /m?later_handle HTTP/1.1\r\nHost: x\r\n\r\n",               "GET /m later_handle 0\n"],
    ["HEAD /n?later HTTP/1.1\r\nHost: x\r\n\r\n",                     ''],
    ["GET /o?unclosed HTTP/1.1\r\nHost: x\r\n\r\n",                   "GET /o unclosed 0\n"],
    ["GET /p?alias HTTP/1.1\r\nHost: x\r\n\r\n",                      "GET /p alias 0\n"],
    ["GET /j HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",       "GET /j  0\n"],
    ["GET /never HTTP/1.1\r\nHost: x\r\n\r\n",                        undef],
);
my @answered = grep { defined $_->[1] } @asked;

for my $logged (1, 0) {
    my $with   = $logged ? 'with an access log' : 'without an access log';
    my $srv    = start_server(app => 'turns.psgi', workers => 1, access_log => $logged);
    my $before = served($srv);
    my $out    = raw_request($srv->port, join('', map { $_->[0] } @asked));
    my ($got, $left) = responses_of($out, map { $_->[0] =~ /\AHEAD / ? 1 : 0 } @answered);
    is scalar(@$got), scalar(@answered), "$with: every request before the close is answered";
    is $left,         '', "$with: nothing after the last answer (the connection closed there)";
    is_deeply [map { $_->[0] } @$got], [(200) x @answered], "$with: each with a 200";

    for my $i (0 .. $#answered) {
        next unless length $answered[$i][1];
        is $got->[$i][2], $answered[$i][1], "$with: answer " . ($i + 1) . " is its request's";
    }
    like $got->[3][1]{allow}, qr/\AGET, HEAD, POST, OPTIONS/, "$with: OPTIONS * is the server's";
    is $got->[4][1]{'content-length'}, length("HEAD /e  0\n"),
        "$with: HEAD has the length of the body it did not send";
    my ($later_head) = grep { $answered[$_][0] =~ /\AHEAD \/n/ } 0 .. $#answered;
    is $got->[$later_head][1]{'content-length'}, length("HEAD /n later 0\n"),
        "$with: so does a delayed response's";
    is $got->[-1][1]{connection}, 'close', "$with: the last says close";
    ok !defined $got->[$_][1]{connection}, "$with: answer " . ($_ + 1) . " keeps the connection"
        for 0 .. $#answered - 1;
    is served($srv) - $before, scalar(@answered), "$with: the scoreboard counted each request";

    if ($logged) {
        my @lines = grep {/"[A-Z]+ /} split /\n/, $srv->access_log;
        is_deeply [map { /"([A-Z]+ \S+)/       ? $1 : '?' } @lines[-@answered .. -1]],
            [map { $_->[0] =~ /\A([A-Z]+ \S+)/ ? $1 : '?' } @answered],
            'each request has its access log line, in order';
    }

    # An application that dies: a 500, and the connection closes after it (what it sent after
    # is not read)
    $out = raw_request($srv->port,
        "GET /x?die HTTP/1.1\r\nHost: x\r\n\r\nGET /y HTTP/1.1\r\nHost: x\r\n\r\n");
    ($got, $left) = responses_of($out);
    is_deeply [map { $_->[0] } @$got], [500], "$with: an application that died is a 500, alone";
    is $got->[0][1]{connection}, 'close', "$with: which closes the connection";
    like $srv->error_log, qr/app died: asked to die \(request GET \/x\?die\)/,
        "$with: the error log says so";
    $srv->stop;
}

# Delayed responses that go wrong: a callback that never responds, one that dies, and a
# responder kept from an earlier request and called after it ended. Each is a 500 that closes
# the connection, with the reason in the error log; the worker lives on.
{
    my $srv = start_server(app => 'turns.psgi', workers => 1, access_log => 0);
    wait_until(sub { $srv->idle == 1 }, 10, 'the worker');
    my ($pid) = $srv->pids;

    # The Perl loop serves a worker's first request (it makes the empty input) and the first
    # with each Host (its judge keeps the names it found good): the C, the ones after
    raw_request($srv->port, "GET /first HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    for (
        [silent => qr/app died: the application's streaming callback returned without responding/],
        [later_die => qr/app died: asked to die later/],
        [stale     => qr/app died: the application responded after its request had ended/],
        )
    {
        my ($q, $logged) = @$_;
        my $first = $q eq 'stale' ? "GET /k?keep HTTP/1.1\r\nHost: x\r\n\r\n" : '';
        my $out   = raw_request($srv->port,
            "${first}GET /s?$q HTTP/1.1\r\nHost: x\r\n\r\nGET /t HTTP/1.1\r\nHost: x\r\n\r\n");
        my ($got, $left) = responses_of($out);
        is_deeply [map { $_->[0] } @$got], [$first ? (200, 500) : (500)], "?$q: a 500, last";
        is $got->[-1][1]{connection}, 'close', "?$q: which closes the connection";
        is $left,                     '',      "?$q: and nothing after it";
        like $srv->error_log, $logged, "?$q: the error log says why";
    }
    is $srv->get('/after')->{content}, "GET /after  0\n", 'after them, served';
    is_deeply [$srv->pids], [$pid], 'by the same worker';

    # A responder whose sub the application emptied is not given to the next delayed response
    my ($emptied) = responses_of(
        raw_request(
            $srv->port,
            "GET /e?emptied HTTP/1.1\r\nHost: x\r\n\r\nGET /l?later HTTP/1.1\r\nHost: x\r\n\r\n"
        )
    );
    is_deeply [map { $_->[0] } @$emptied], [200, 200],
        'a delayed response after one whose responder was emptied: answered';
    $srv->stop;
}

# An application that closes the connection's handle and opens a file before it answers: the
# answer goes nowhere (the error log says why), never into the file that took the number
{
    my $srv = start_server(app => 'turns.psgi', workers => 1, access_log => 0);
    wait_until(sub { $srv->idle == 1 }, 10, 'the worker');
    my ($pid) = $srv->pids;
    my $file  = File::Spec->tmpdir . "/perennial-turns-$pid";
    my $out   = raw_request($srv->port, "GET /z?close HTTP/1.1\r\nHost: x\r\n\r\n");
    is $out, '', 'an application that closed the connection: no answer on it';

    # The client sees the end as the application closes; the rest comes after
    wait_until(sub { $srv->idle == 1 }, 10, 'the worker done with it');
    ok -e $file, 'the application opened its file';
    is -s $file, 0, 'and nothing of the answer went into it';

    # (The Perl twin's write finds the handle closed and sends nothing, without a word)
    like $srv->error_log, qr/app died: .*not an open handle/, 'the error log says why'
        if Perennial::HTTP::Core::implementation() eq 'C';
    $srv->stop;
    unlink $file;
}

# What an application leaves behind as it answers is not its failure: a temporary whose DESTROY
# runs a failing eval (perl does not keep $@ from it). And an application that empties the
# connection's glob fails alone: its worker lives on.
{
    my $srv = start_server(app => 'turns.psgi', workers => 1, access_log => 0);
    wait_until(sub { $srv->idle == 1 }, 10, 'the worker');
    my ($pid) = $srv->pids;
    my $out   = raw_request($srv->port, "GET /d?destroy HTTP/1.1\r\nHost: x\r\n\r\n" x 3);
    my ($got) = responses_of($out);
    is_deeply [map { $_->[0] } @$got], [200, 200, 200],
        'a DESTROY that sets $@ as the answer goes: every answer a 200';
    unlike $srv->error_log, qr/app died/, 'and no application died';
    raw_request($srv->port, "GET /u?undef HTTP/1.1\r\nHost: x\r\n\r\n");
    is $srv->get('/after')->{content}, "GET /after  0\n", 'after one that emptied its glob, served';
    is_deeply [$srv->pids], [$pid], 'by the same worker';
    $srv->stop;
}

# MaxRequestsPerChild counts the requests the C serves: the last one a worker may serve says
# close, and the worker is replaced
my $srv   = start_server(app => 'turns.psgi', workers => 1, conf => "MaxRequestsPerChild 3\n");
my $out   = raw_request($srv->port, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n" x 5);
my ($got) = responses_of($out);
is scalar(@$got), 3, 'MaxRequestsPerChild 3: three answers on a connection of five requests';
is $got->[2][1]{connection}, 'close', 'the third says close';
$srv->stop;

done_testing;
