use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             ();
use Perennial::Test qw(raw_request start_server wait_until);

# An application that dies: a clean 500 while nothing was sent, a cut connection after
my $srv = start_server(app => 'die_late.psgi', workers => 1);
for my $case (['/before', 'before the head'], ['/head', 'after the head, before any body']) {
    my ($path, $why) = @$case;
    my $out = raw_request($srv->port, "GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
    like $out,   qr{\AHTTP/1\.1 500 Internal Server Error\r\n}, "500 when it dies $why";
    unlike $out, qr/200 OK/,                                    'and no 200 head before it';
}
my $out = raw_request($srv->port, "GET /body HTTP/1.1\r\nHost: x\r\n\r\n");
like $out, qr{\AHTTP/1\.1 200 OK.*partial\n\r\n\z}s,
    'after some body: the response is cut, not completed';
unlike $out, qr/0\r\n\r\n\z/, 'no last chunk, so the client can tell';
my $log = $srv->error_log;
like $log, qr/app died: before the head \(request GET \/before\)/, 'logged with the request';
like $log, qr/app died: after some body/,                          'every death logged';
is $srv->get('/before')->{status}, 500, 'the worker lives on';
ok wait_until(sub { (() = $srv->access_log =~ /" 500 /g) == 3 }, 10, 'three 500s'),
    'access log has the 500s';
$srv->stop;

# A status that cannot end a response: a 1xx is interim (a client would take the next
# response, the next request's, as this one's), and one outside 100 to 599 is none. A 500 in
# its place, a line in the error log, and the connection closes, the next request unanswered.
$srv = start_server(app => 'statuses.psgi', workers => 1);
for my $status (qw(100 101 103 199 99 1000 abc)) {
    for my $stream (0, 1) {
        my $out = raw_request($srv->port,
                  "GET /?status=$status&stream=$stream HTTP/1.1\r\nHost: x\r\n\r\n"
                . "GET /?status=200 HTTP/1.1\r\nHost: x\r\n\r\n");
        like $out, qr{\AHTTP/1\.1 500 Internal Server Error\r\n(?:(?!HTTP/).)*\z}s,
            "status $status" . ($stream ? ', streamed' : '') . ': 500 alone, the connection closed';
    }
}
like $srv->error_log,
    qr/app died: the application's response has status '100', which cannot end a response/,
    'the error log says why';
like raw_request($srv->port, "GET /?status=204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    qr{\AHTTP/1\.1 204 No Content\r\n}, 'a final status is sent as it is';
$srv->stop;

# An exception object that cannot be made text (its overloading dies, or has no "" and forbids
# the fallback): a 500 all the same, named by its class in the log, and the worker lives on
$srv = start_server(app => 'die_objects.psgi', workers => 1);
my $pid = $srv->get('/')->{content};
for my $case (
    ['/notext',  'NoText', 500],
    ['/bomb',    'Bomb',   500],
    ['/stream',  'Bomb',   500],
    ['/cleanup', 'NoText', 200]
    )
{
    my ($path, $class, $status) = @$case;
    like raw_request($srv->port, "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        qr{\AHTTP/1\.1 $status }, "$path: $status";
    ok wait_until(
        sub { $srv->error_log =~ /an exception object of class $class that cannot be made text/ },
        10, "$path logged"),
        "$path: logged, named by its class";
}
is $srv->get('/')->{content}, $pid, 'the same worker answers after them';
unlike $srv->error_log, qr/exited|died \(/, 'no worker died';
$srv->stop;

# A warning: a line of the error log, as the server's own are, and never "perennial: ..."
$srv = start_server(app => 'warns.psgi', workers => 1);
is $srv->get('/here')->{content}, "warned\n", 'an application that warns answers';
ok wait_until(sub { $srv->error_log =~ /\[pid \d+\] \[warn\] careful with \/here$/m },
    10, 'its line'),
    'its warning is a line of the error log at level warn';
unlike $srv->error_log, qr/perennial: careful/, 'not the command line\'s message';
$srv->stop;

# A mod_perl handler where no DocumentRoot maps URLs to files: it runs, and nothing of
# Perennial's own warns in the log
my $lib = Cwd::abs_path('t/modperl_app/lib');
$srv = start_server(workers => 1, conf => <<"CONF");
PerlSwitches -I$lib
PerlModule Demo::Hello
<Location /hello>
    SetHandler perl-script
    PerlResponseHandler Demo::Hello
</Location>
CONF
like $srv->get('/hello/x/y')->{content}, qr{^uri=/hello/x/y$}m, 'a handler with no DocumentRoot';
unlike $srv->error_log,                  qr/uninitialized/, 'and no warning of Perennial\'s own';
$srv->stop;
done_testing;
