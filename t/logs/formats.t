use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir slurp start_server wait_until);

# mod_log_config's LogFormat and CustomLog: nicknames, formats written in place, several logs,
# a log piped to a command; and ServerTokens
my $dir = scratch_dir();
chmod 0777, $dir or die $!;    # The piped command may run as anyone; it writes here

my $srv = start_server(
    app  => 'pid.psgi',
    conf => <<"CONF");
LogFormat "%h %l %u %t \\"%r\\" %>s %b" clf
LogFormat "%m|%U|%q|%H|%>s|%B|%{X-Test}i|%{Content-Type}o|%p|%P|%X|%D|%{ms}T|%V" fields
CustomLog $dir/clf.log clf
CustomLog $dir/fields.log fields
CustomLog $dir/inline.log "%>s %U \\"%{User-Agent}i\\""
CustomLog $dir/combined.log combined
CustomLog "|/bin/sh -c 'cat >> $dir/piped.log'" "piped %U"
ServerTokens Minor
CONF
my $port = $srv->port;
my $out  = raw_request($port,
    "GET /a/b?x=1 HTTP/1.1\r\nHost: example.test:$port\r\nX-Test: t\"q\r\nUser-Agent: UA/1\r\nReferer: http://r/\r\nConnection: close\r\n\r\n"
);
like $out, qr{\r\nServer: Perennial/\d+\.\d+\r\n}, 'ServerTokens Minor: the Server header';
ok wait_until(sub { slurp("$dir/fields.log") =~ /\n/ && slurp("$dir/piped.log") =~ /\n/ },
    10, 'lines'),
    'every log has its line';
like slurp("$dir/clf.log"),
    qr{\A127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [-+]\d{4}\] "GET /a/b\?x=1 HTTP/1\.1" 200 \d+\n\z},
    'a nickname of the file\'s own: the common log format';
my @f = split /\|/, slurp("$dir/fields.log") =~ s/\n\z//r;
is_deeply [@f[0 .. 10]],
    ['GET', '/a/b', '?x=1', 'HTTP/1.1', 200, $f[5], 't\"q', 'text/plain', $port, $f[9], '-'],
    'method, path, query, protocol, status, request header escaped, response header, port, -X';
like $f[5], qr/\A\d+\z/, '%B: bytes';
isnt $f[9], $srv->pid, '%P: the worker, not the manager';
like $f[11], qr/\A\d+\z/, '%D: microseconds';
is $f[13],                   'example.test',        '%V: the host the client asked for';
is slurp("$dir/inline.log"), qq{200 /a/b "UA/1"\n}, 'a format written in place';
like slurp("$dir/combined.log"), qr{ 200 \d+ "http://r/" "UA/1"\n\z}, 'Apache\'s combined';
is slurp("$dir/piped.log"), "piped /a/b\n", 'a piped log: the command reads the lines';
$srv->stop;

subtest 'CustomLog syslog is a file named syslog under ServerRoot, as mod_log_config has it' =>
    sub {
    my $root = scratch_dir();
    chmod 0777, $root or die $!;
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => "ServerRoot $root\nCustomLog syslog \"%>s %U\"\n"
    );
    wait_until(sub { ($srv->slots)[0]{pid} }, 10, 'the worker, its pid in its slot');
    my $pid = ($srv->slots)[0]{pid};
    is $srv->get("/x$_")->{status}, 200, "request $_ answered" for 1, 2;
    is + ($srv->slots)[0]{pid}, $pid, 'the worker lives on (it died after each request)';
    ok wait_until(sub { slurp("$root/syslog") =~ /x2/ }, 10, 'the log'),
        'the lines are in the file';
    $srv->stop;
    };

subtest 'an application\'s own Server header replaces Perennial\'s' => sub {
    my $app = "$dir/server.psgi";
    open(my $fh, '>', $app) or die $!;
    print {$fh} q{sub { [200, ['Content-Type' => 'text/plain', 'Server' => 'MyApp/2'], ['x']] }};
    close $fh;
    my $srv = start_server(conf => "<Location />\nSetHandler psgi\nPSGIApp $app\n</Location>\n");
    my $res = raw_request($srv->port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    is scalar(() = $res =~ /^Server:/mg), 1, 'one Server header';
    like $res, qr{^Server: MyApp/2\r$}m, 'the application\'s';
    $srv->stop;
};

subtest 'a response header in the format, for a request refused before any response' => sub {
    my $dir = scratch_dir();
    chmod 0777, $dir or die $!;
    my $srv = start_server(
        app     => 'pid.psgi',
        workers => 1,
        conf    => qq{CustomLog $dir/o.log "%>s %{Content-Type}o"\n}
    );
    wait_until(sub { $srv->idle == 1 }, 10, 'the worker');    # Its pid is in its slot then
    my $pid = ($srv->slots)[0]{pid};
    like raw_request($srv->port, "BAD REQUEST LINE\r\n\r\n"), qr{\AHTTP/1\.\d 400 },
        'a request line that is not one: 400';
    like raw_request($srv->port, "GET / HTTP/1.1\r\n\r\n"), qr{\AHTTP/1\.1 400 }, 'no Host: 400';
    is $srv->get('/')->{status}, 200, 'and the next is served';
    ok wait_until(sub { slurp("$dir/o.log") =~ /\n.*\n.*\n/ }, 10, 'three lines'), 'three lines';
    like slurp("$dir/o.log"), qr{\A400 text/plain\n400 text/plain\n200 text/plain\n\z},
        'the refused ones with their error page\'s Content-Type, as Apache logs its own';
    is + ($srv->slots)[0]{pid}, $pid, 'by the same worker: none died writing the log';
    unlike $srv->error_log, qr/died/, 'and the error log says no worker died';
};

done_testing;
