use v5.36;
use lib 't/lib';
use Test::More;
use Cwd qw(abs_path);
use HTTP::Tiny;
use IO::Socket::IP;
use Perennial::Test qw(start_server wait_until);

# The configuration `make run` serves (examples/perennial.conf), with one worker on a port of
# the test's own, and the seed talk's scripts behaving as the talk says in each of its modes
my $examples = abs_path('examples');
open(my $fh, '<', "$examples/perennial.conf") or die "Can't read the examples' config: $!";
my $conf = join '', grep { !/\A(?:Listen|PidFile|CustomLog|LogLevel)\b/ } <$fh>;
close $fh;
my $srv = start_server(workers => 1, conf => "ServerRoot $examples\n$conf");
my $get = sub ($path) { $srv->get($path)->{content} };

subtest 'hello.pl in the three modes' => sub {
    for my $mode (qw(cgi-bin perlrun registry)) {
        my $res = $srv->get("/$mode/hello.pl");
        is $res->{status}, 200, "/$mode: 200";
        like $res->{content}, qr{<h1>Hello world!</h1>},       "/$mode: the page";
        like $res->{content}, qr{GATEWAY_INTERFACE: CGI/1\.1}, "/$mode: the CGI environment";
    }
};

subtest 'count.pl: a global counts per worker only under Registry' => sub {
    is_deeply [map { $get->('/cgi-bin/count.pl') } 1 .. 3], [("counted 1\n") x 3], 'CGI';
    is_deeply [map { $get->('/perlrun/count.pl') } 1 .. 3], [("counted 1\n") x 3], 'PerlRun';
    is_deeply [map { $get->('/registry/count.pl') } 1 .. 3],
        ["counted 1\n", "counted 2\n", "counted 3\n"], 'Registry';
};

subtest 'closure.pl: the closure trap shows under Registry, and is logged' => sub {
    is_deeply [map { $get->('/perlrun/closure.pl') } 1 .. 2], [("Counter: 1\n") x 2], 'PerlRun';
    is_deeply [map { $get->('/registry/closure.pl') } 1 .. 2], ["Counter: 1\n", "Counter: 2\n"],
        'Registry';
    like $srv->error_log, qr/closure\.pl: Variable "\$counter" will not stay shared/,
        'the warning names the script';
};

subtest 'counter.pl requires "./countlib.pl" from its own directory' => sub {
    is $get->('/cgi-bin/counter.pl'), "Counter: 1\n", 'CGI';
    is_deeply [map { $get->('/perlrun/counter.pl') } 1 .. 2], [("Counter: 1\n") x 2],
        'PerlRun loads the library again each time';
    is_deeply [map { $get->('/registry/counter.pl') } 1 .. 2], ["Counter: 1\n", "Counter: 2\n"],
        'Registry keeps it';
};

subtest 'cwd.pl opens data.txt beside it' => sub {
    for my $mode (qw(cgi-bin perlrun registry)) {
        is $get->("/$mode/cwd.pl"),
            "Cwd: $examples/cgi-bin\ndata.txt: " . _first_line("$examples/cgi-bin/data.txt"),
            "/$mode";
    }
};

subtest 'form.pl: a POST answers, and its parameters do not reach the next request' => sub {
    my $url = 'http://127.0.0.1:' . $srv->port . '/registry/form.pl';
    my $res = HTTP::Tiny->new->post_form($url, {name => '<Ann>'});
    like $res->{content},             qr{<p>Hello, &lt;Ann&gt;!</p>}, 'the name, escaped';
    like $get->('/registry/form.pl'), qr{<p>No name yet\.</p>}, 'nothing left for the next one';
};

subtest 'the PSGI examples beside them' => sub {
    like $get->('/hello'), qr/Hello/, '/hello';
    is $srv->get('/registry/')->{status}, 404,
        "no directory listing: 404, as Apache's Registry declines a directory";
    is $srv->get('/registry/data.txt')->{status}, 500,
        'a file that is not a script is not served as text';
    is $get->('/stream'), join('', map {"line $_\n"} 1 .. 5), '/stream: five lines';
};

subtest 'the README\'s slow reader: /stream?lines=2000000 goes to the parking process' => sub {
    my $slow = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port) or die $@;
    $slow->syswrite("GET /stream?lines=2000000 HTTP/1.1\r\nHost: x\r\n\r\n");
    sysread($slow, my $first, 1000);
    like $first, qr{\AHTTP/1\.1 200 OK}, 'its start comes';
    ok wait_until(
        sub {
            $srv->error_log
                =~ /response handed to the parking process, the client takes it slowly: \d+ bytes left of it \(request GET \/stream\?lines=2000000,/;
        },
        20,
        'handed'
        ),
        'the rest is handed over, and the log says so';
    is $srv->get('/hello')->{status}, 200, 'the one worker serves another meanwhile';
};

$srv->stop;
done_testing;

sub _first_line ($file) {
    open(my $in, '<', $file) or die "Can't read $file: $!";
    return scalar <$in>;
}
