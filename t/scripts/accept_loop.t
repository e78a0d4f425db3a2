use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use IO::Select;
use Perennial::Test          qw(scratch_dir slurp wait_until write_file);
use Perennial::Test::Scripts qw(start_script_server);

# A CGI::Fast accept loop (SmokePing's and munin-cgi-html's shape) on one worker: under mod_cgi
# each request is a process and turn 1, and under PerlRun a fresh start and turn 1; under
# Registry each request is one turn of the same loop, whose set-up ran once and whose lexicals
# live on, as under FastCGI
plan skip_all => 'CGI::Fast is not installed (make test installs it)'
    unless eval { require CGI::Fast; 1 };

my $dir = scratch_dir();
write_file("$dir/fast_loop.pl", slurp('t/cgi-bin/fast_loop.pl'), 0755);
my $srv = start_script_server(dir => $dir);
my $worker;
wait_until(sub { $worker = ($srv->slots)[0]{pid} }, 10, 'the worker') or BAIL_OUT('no worker');
my %loop_pid;        # Registry's loop process
my $later = time;    # Each change of the script moves its mtime further on

sub turn ($mode, $x) {
    my $body = $srv->get("/$mode/fast_loop.pl?x=$x")->{content} // '';
    return $body =~ /\Aturn (\d+) x=\Q$x\E method=GET pid=(\d+) set up by=(\d+)\ncaf\xe9\n\z/
        ? [$1, $2, $3]
        : $body;
}

subtest 'mod_cgi: a process per request, so always the first turn' => sub {
    is_deeply [map { turn('cgi-bin', $_)->[0] } 1 .. 5], [(1) x 5], 'turn 1 each time';
};

subtest 'PerlRun: every request afresh, so the first turn, in the worker' => sub {
    is_deeply [map { turn('perlrun', $_) } 1 .. 5], [([1, $worker, $worker]) x 5],
        'turn 1 each time, compiled and set up for the request';
    unlike $srv->error_log, qr/redefined/, 'each compile starts from an empty package';
};

{
    my $mode = 'registry';
    subtest "/$mode: 20 requests, 20 turns of one loop" => sub {
        my @turns = map { turn($mode, $_) } 1 .. 20;
        is_deeply [map { $_->[0] } @turns], [1 .. 20], 'turns 1 to 20';
        is_deeply [map { $_->[2] } @turns], [($worker) x 20],
            'set up once, in the worker, and kept';
        is $turns[0][1], $worker, 'the first turn ran in the worker';
        $loop_pid{$mode} = $turns[1][1];
        isnt $loop_pid{$mode}, $worker, 'the rest in its loop process';
        is_deeply [map { $_->[1] } @turns[1 .. 19]], [($loop_pid{$mode}) x 19], 'one loop process';
        my $post = HTTP::Tiny->new->post(
            'http://127.0.0.1:' . $srv->port . "/$mode/fast_loop.pl",
            {   content => 'x=posted',
                headers => {'Content-Type' => 'application/x-www-form-urlencoded'}
            }
        )->{content};
        like $post,
            qr/\Aturn 21 x=posted method=POST pid=$loop_pid{$mode} .*\ncaf\xe9\n\z/,
            'a POST body reaches the turn';
        is_deeply [map { $_->{pid} } $srv->slots], [$worker], 'served by the one worker';
    };
    subtest "/$mode: a loop that ends, a script that changes" => sub {
        is turn($mode, 'last')->[0], 22, 'the turn that leaves the loop answers';
        ok wait_until(sub { !kill 0, $loop_pid{$mode} }, 10, 'loop process gone'),
            'and its process ends';
        my $sock = $srv->connect;    # Streamed to an HTTP/1.0 client: it ends with the connection
        $sock->syswrite("GET /$mode/fast_loop.pl?x=again&stream=1 HTTP/1.0\r\n\r\n");
        my $got = '';
        ok wait_until(
            sub {
                IO::Select->new($sock)->can_read(0.5) or return 0;
                !sysread $sock, $got, 4096, length $got;
            },
            10,
            'the end of the answer'
            ),
            'the first turn\'s answer ends: the loop process it forked holds no client socket';
        like $got, qr/\r\n\r\nturn 1 x=again method=GET pid=$worker set up by=$worker\n/,
            'the next request starts it again';
        my $loop = turn($mode, 'two')->[1];
        my $file = "$dir/fast_loop.pl";
        $later += 100;
        utime $later, $later, $file or die "$file: $!";
        is_deeply turn($mode, 'changed'), [1, $worker, $worker],
            'the script changed: compiled again, from turn 1';
        ok wait_until(sub { !kill 0, $loop }, 10, 'old loop gone'), 'the old loop process ends';
        $loop_pid{$mode} = turn($mode, 'next')->[1];
    };
}

my $log = $srv->error_log;
like $log,   qr{stderr from \S+fast_loop\.pl: fast_loop turn 20$}m, "a turn's STDERR is logged";
unlike $log, qr/untie attempted|Prototype mismatch|app died/,       'nothing else logged';
$srv->stop;
unlike $srv->error_log, qr/ignored TERM/,
    'the worker stops on TERM (libfcgi takes TERM as it loads)';
ok wait_until(
    sub {
        !grep { kill 0, $_ } values %loop_pid;
    },
    10,
    'loops gone'
    ),
    'the loop processes end with their worker';

# CGI.pm loaded at start with MOD_PERL set (PerlModule CGI): each turn of the loop process reads
# its own CGI variables, a CGI::Fast loop's and a plain FCGI loop's with CGI->new alike (they had
# the first request's object, gone, and answered 500)
write_file("$dir/fcgi_loop.pl", <<'PERL', 0755);
use FCGI;
use CGI ();
my ($request, $turn) = (FCGI::Request(), 0);
while ($request->Accept >= 0) {
    my $q = CGI->new;
    print $q->header('text/plain'), 'turn ', ++$turn, ' x=', $q->param('x') // '-', "\n";
}
PERL
$srv = start_script_server(dir => $dir, conf => "PerlModule CGI\n");
is_deeply [map { my $t = turn('registry', $_); ref $t ? $t->[0] : $t } 1 .. 4], [1 .. 4],
    'CGI.pm loaded first: a CGI::Fast loop, turn by turn';
is_deeply [map { $srv->get("/registry/fcgi_loop.pl?x=$_")->{content} } 1 .. 3],
    [map {"turn $_ x=$_\n"} 1 .. 3], 'and a plain FCGI loop with CGI->new';
$srv->stop;

done_testing;
