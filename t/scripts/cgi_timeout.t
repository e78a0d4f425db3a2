use v5.36;
use lib 't/lib';
use Test::More;
use Time::HiRes     ();
use Perennial::Test qw(scratch_dir start_server wait_until write_file);

# A CGI script that writes nothing for Timeout seconds: the client gets 504, the log says why,
# and the script's process is ended after the response (TERM, then KILL 3 s later if it
# ignores TERM), as Apache's mod_cgi ends it; the worker goes on serving. One whose output ended
# but whose standard error did not gets its whole response.
my $dir   = scratch_dir();
my $marks = "$dir/marks";
mkdir $marks;
chmod 0777, $marks;
for my $script (['quiet.pl', ''], ['stubborn.pl', q{$SIG{TERM} = 'IGNORE';}]) {
    my ($name, $first) = @$script;
    write_file("$dir/cgi/$name", <<"PL", 0755);
#!/usr/bin/perl
$first
open my \$pid, '>', "$marks/$name.pid" or die; print \$pid \$\$; close \$pid;
sleep 30;
print "Content-Type: text/plain\\n\\nlate\\n";
PL
}
write_file("$dir/cgi/keeps_stderr.pl", <<"PL", 0755);    # Its output ends, its stderr not
#!/usr/bin/perl
open my \$pid, '>', "$marks/keeps_stderr.pl.pid" or die; print \$pid \$\$; close \$pid;
\$| = 1;
print "Content-Type: text/plain\\n\\nanswered\\n";
close STDOUT;
sleep 30;
PL
write_file("$dir/cgi/redirects.pl", <<"PL", 0755);       # A local redirect, and it works on too
#!/usr/bin/perl
open my \$pid, '>', "$marks/redirects.pl.pid" or die; print \$pid \$\$; close \$pid;
\$| = 1;
print "Location: /cgi-bin/keeps_stderr.pl\\n\\n";
close STDOUT;
sleep 30;
PL
mkdir "$dir/reg";
write_file("$dir/reg/cleans_late.pl", <<'PL', 0755);     # Its cleanup outlasts the deadline
my $r = shift;
$r->pool->cleanup_register(sub { sleep 10 });
$r->internal_redirect('/cgi-bin/hello.pl');
PL
write_file("$dir/cgi/hello.pl",
    qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\nhello\\n";\n}, 0755);
system("chmod -R a+rX $dir") == 0 or die;
my $srv = start_server(
    workers => 1,
    conf    => "Timeout 1\nScriptAlias /cgi-bin/ $dir/cgi/\n<Directory $dir/cgi>\n"
        . "    Require all granted\n</Directory>\n"
);

for my $name ('quiet.pl', 'stubborn.pl') {
    is $srv->get("/cgi-bin/$name")->{status}, 504, "$name: 504 after Timeout without output";
    my $pid = do { local (@ARGV, $/) = "$marks/$name.pid"; <> };
    ok wait_until(sub { !kill 0, $pid }, 10, "$name: its process ends"),
        "$name: its process is ended";
    is $srv->get('/cgi-bin/hello.pl')->{content}, "hello\n", "$name: the worker serves on";
}

# Its response is whole when its output ends (mod_cgi holds it until the standard error ends
# too, or Timeout, then ends it as whole): the rest of Timeout is the script's, then it is ended
my $res = $srv->get('/cgi-bin/keeps_stderr.pl');
is_deeply [@$res{qw(status content)}], [200, "answered\n"],
    'a script that closes its output and keeps its standard error: its whole response';
my $pid = do { local (@ARGV, $/) = "$marks/keeps_stderr.pl.pid"; <> };
ok wait_until(sub { !kill 0, $pid }, 10, 'keeps_stderr.pl ends'), 'and its process is ended';
is $srv->get('/cgi-bin/hello.pl')->{content}, "hello\n", 'the worker serves on';

# A response framed by the connection's end (HTTP/1.0) ends when the output does too: the
# connection is half-closed before the standard error is read on (Timeout 20 here)
my $long = start_server(
    workers => 1,
    conf    => "Timeout 20\nScriptAlias /cgi-bin/ $dir/cgi/\n<Directory $dir/cgi>\n"
        . "    Require all granted\n</Directory>\n"
);
my $sock = $long->connect;
print {$sock} "GET /cgi-bin/keeps_stderr.pl HTTP/1.0\r\n\r\n";
my ($answer, $ended) = ('', 0);
my $until = Time::HiRes::time() + 15;
while (Time::HiRes::time() < $until) {
    my $rin = '';
    vec($rin, fileno $sock, 1) = 1;
    select(my $rout = $rin, undef, undef, 0.2) or next;
    my $n = sysread $sock, $answer, 65_536, length $answer;
    if (!$n) { $ended = 1; last }
}
my $running = do { local (@ARGV, $/) = "$marks/keeps_stderr.pl.pid"; <> };
like $answer, qr/\r\n\r\nanswered\n\z/, 'HTTP/1.0: the whole response';
ok $ended && kill(0, $running), 'ended by the server while the script still runs';
kill 'KILL', $running;
$long->stop;

my $log = $srv->error_log;
like $log,
    qr{keeps_stderr\.pl \(request GET /cgi-bin/keeps_stderr\.pl\): still running after its response: TERM},
    'sent TERM after Timeout without its standard error ending';
unlike $log, qr{keeps_stderr.*timed out}, 'not as a response cut short';
like $log,
    qr{quiet\.pl \(request GET /cgi-bin/quiet\.pl\): Timeout waiting for output from CGI script},
    'the log says why';
like $log, qr{quiet\.pl \(request GET /cgi-bin/quiet\.pl\): still running after its response: TERM},
    'and that it was sent TERM';
like $log,
    qr{stubborn\.pl \(request GET /cgi-bin/stubborn\.pl\): still running 3 s after TERM: KILL},
    'and KILL, when it ignored TERM';
$srv->stop;

# A RequestDeadline shorter than Timeout ends a script that works on after its response at the
# deadline, and the worker goes on: the deadline is the request's, and its response had gone
# (the worker was stopped before, and the manager logged a request lost that was answered)
my $late = start_server(
    workers => 1,
    conf    => "Timeout 20\nRequestDeadline 2\nScriptAlias /cgi-bin/ $dir/cgi/\n"
        . "<Directory $dir/cgi>\n    Require all granted\n</Directory>\n"
        . "Alias /reg $dir/reg\n<Location /reg>\n    SetHandler perl-script\n"
        . "    PerlResponseHandler ModPerl::Registry\n    Options +ExecCGI\n</Location>\n"
);
ok wait_until(sub { $late->idle == 1 }, 10, 'idle'), 'its one worker has started';
my $worker = ($late->slots)[0]{pid};
$res = $late->get('/cgi-bin/keeps_stderr.pl');
is_deeply [@$res{qw(status content)}], [200, "answered\n"], 'RequestDeadline: the whole response';
$pid = do { local (@ARGV, $/) = "$marks/keeps_stderr.pl.pid"; <> };
ok wait_until(sub { !kill 0, $pid }, 10, 'keeps_stderr.pl ends at the deadline'),
    'its process is ended at the deadline, not at Timeout';
is $late->get('/cgi-bin/hello.pl')->{content}, "hello\n", 'the worker serves on';
is + ($late->slots)[0]{pid},                   $worker,   'the same worker';
like $late->error_log,
    qr/keeps_stderr\.pl .*still running at the request deadline after its response: TERM/,
    'the log says the deadline ended it';
unlike $late->error_log, qr/passed the request deadline|died|lost/,
    'no worker stopped, no request lost';

# Two scripts working on after one response (a local redirect): both are ended at the deadline
$res = $late->get('/cgi-bin/redirects.pl');
is_deeply [@$res{qw(status content)}], [200, "answered\n"], 'a local redirect: its response';
my @pids = map {
    my $f = "$marks/$_.pid";
    do { local (@ARGV, $/) = $f; <> }
} qw(redirects.pl keeps_stderr.pl);
ok wait_until(
    sub {
        !grep { kill 0, $_ } @pids;
    },
    10,
    'both scripts end at the deadline'
    ),
    'both scripts are ended at the deadline, not at Timeout';
is + ($late->slots)[0]{pid}, $worker, 'the same worker still';

# A script's own cleanup after a CGI script's reap still has the deadline
$res = $late->get('/reg/cleans_late.pl');
is_deeply [@$res{qw(status content)}], [200, "hello\n"], 'a redirect to a CGI script: answered';
ok $late->wait_replaced([$worker], 1), 'the cleanup that outlasts the deadline stops the worker';
like $late->error_log, qr/passed the request deadline \(2 s\) serving 'GET \/reg\/cleans_late\.pl/,
    'as the deadline says';
unlike $late->error_log, qr/lost/, 'an answered request is not reported lost';
$late->stop;

done_testing;
