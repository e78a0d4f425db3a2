use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test
    qw(raw_request scratch_dir script_location slurp start_server wait_until write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_head start_apache);

# Output as mod_cgi gives it, for what a resident script cannot give by printing alone: the
# pragmas a new perl starts with, a `last` outside a loop, a die after the head, an nph-
# script's own framing, the output of child processes in the order it was written, the body a
# child reads, a forked copy of the script. Each script is requested from mod_cgi (Apache,
# started here) and from Perennial in CGI, PerlRun and Registry mode, and every answer is
# compared with mod_cgi's, which is compared with the one written beside it.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
my $cgi = "$dir/cgi-bin";
mkdir $cgi or die "$cgi: $!";
my @scripts
    = qw(die_partial.pl die_buffered.pl nph-chunked.pl children.pl child_stdin.pl fork.pl pragmas.pl
    last.pl);
write_file("$cgi/$_", slurp("t/cgi-bin/$_"), 0755) for @scripts;
system("chmod -R a+rX $dir") == 0 or die;    # Apache's children run as www-data

my $conf = "ScriptAlias /cgi-bin/ $cgi/\n<Directory $cgi>\n    Require all granted\n</Directory>\n";
write_file("$dir/apache.conf",
    apache_head($dir, 'OUT_PORT', qw(authz_core alias cgi mime)) . $conf);
my $run = scratch_dir();
my ($apid, $aport) = start_apache("$dir/apache.conf", 'OUT_PORT', SITE_RUN => $run)
    or BAIL_OUT('Apache did not start');
my $srv = start_server(
    workers => 1,
    conf    => $conf
        . script_location('/perlrun',  $cgi, 'ModPerl::PerlRun')
        . script_location('/registry', $cgi)
);
my @modes = qw(cgi-bin perlrun registry);
wait_until(sub { $srv->idle == 1 }, 10, 'the worker, its pid in its slot');
my $worker = ($srv->slots)[0]{pid};

# script, request body, [status, body] as mod_cgi answers
my @rows = (
    ['die_partial.pl',  '', [201, "partial body\n"]],
    ['die_buffered.pl', '', [200, "buffered body\n"]],
    [   'children.pl',
        '',
        [   200,
            join '',
            map {"$_\n"} '1 perl',
            '2 system',
            '3 perl',
            '4 exec in a fork',
            '5 a pipe to cat',
            '6 backticks',
            '8 perl',
            '9 system, last'
        ]
    ],
    ['last.pl',        '',                 [200, "before\n"]],
    ['pragmas.pl',     '',                 [200, "no strict\nuse 5.012: strict\nwarnings: 0\n"]],
    ['child_stdin.pl', 'the body, unread', [200, "cat read: the body, unread\nend\n"]],
    [   'fork.pl',
        '',
        [   200,
            "parent\nchild that will exit\nchild status 3\nchild that will end\n"
                . "done in the child\nchild status 0\ndone in the parent\n"
        ]
    ],
);
for my $row (@rows) {
    my ($script, $body, $want) = @$row;
    my @request = (POST => "/cgi-bin/$script", $body);
    my $apache  = answer_of($aport, {'content-type' => 1}, @request);
    is_deeply [@$apache{qw(status body)}], $want, "mod_cgi: $script" or diag explain $apache;
    for my $mode (@modes) {
        $request[1] = "/$mode/$script";
        for my $round (1, 2) {
            is_deeply answer_of($srv->port, {'content-type' => 1}, @request), $apache,
                "/$mode/$script" . ($round == 2 ? ', again' : '');
        }
    }
}

subtest 'an nph- script: its bytes, unchanged, then the connection closes' => sub {
    my $two = "GET /MODE/nph-chunked.pl HTTP/1.1\r\nHost: localhost\r\n\r\n"
        . "GET /MODE/nph-chunked.pl HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my $nph = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
        . "5\r\nhello\r\n0\r\n\r\n";
    is raw_request($aport, $two =~ s/MODE/cgi-bin/gr), $nph, 'mod_cgi';
    for my $mode (@modes) {
        is raw_request($srv->port, $two =~ s/MODE/$mode/gr), $nph, "/$mode";
        is raw_request($srv->port, "HEAD /$mode/nph-chunked.pl HTTP/1.0\r\n\r\n"), $nph,
            "/$mode, HEAD: as mod_cgi, the script's bytes";
    }
};

subtest 'the error log: the die with its line, and what children wrote to stderr' => sub {
    my $log = $srv->error_log;
    for my $mode (qw(perlrun registry)) {
        like $log, qr{\Q(request POST /$mode/die_partial.pl)\E: died after output at \S+ line 6},
            "/$mode: the die after output";
    }
    my @stderr = $log =~ /stderr from \S+children\.pl: 7 to stderr$/mg;
    is scalar @stderr, 6, "a child's stderr, each time in each mode, as a line of its own";
    unlike $log, qr/app died|Use of uninitialized/, 'nothing else went wrong';
    is_deeply [map { $_->{pid} } $srv->slots], [$worker],
        'the one worker served it all: no forked copy took its place or ended it';
};

subtest 'a file without a #! line: executed itself, as mod_cgi does, so no shell runs it' => sub {
    write_file("$cgi/no_interpreter.cgi",
        "echo 'Content-Type: text/plain'\necho\necho ran by a shell\n", 0755);
    my $apache = answer_of($aport, {}, GET => '/cgi-bin/no_interpreter.cgi');
    is $apache->{status}, 500, 'mod_cgi: 500';
    my $ours = answer_of($srv->port, {}, GET => '/cgi-bin/no_interpreter.cgi');
    is $ours->{status}, 500, 'Perennial: 500, as mod_cgi';
    unlike $ours->{body}, qr/ran by a shell/, 'and nothing ran';
    like $srv->error_log, qr{exec of \S+/no_interpreter\.cgi failed: Exec format error},
        'the log says why, as Apache\'s does';
};

subtest 'the signals a script starts with: those of mod_cgi\'s scripts' => sub {
    write_file("$cgi/signals.pl", <<'PL', 0755);
#!/usr/bin/perl
open my $status, '<', "/proc/$$/status" or die;
my %mask = map { /^(Sig\w+):\s*(\w+)/ ? ($1 => $2) : () } <$status>;
printf "Content-Type: text/plain\n\nignored %08x blocked %08x\n",
    map { hex(substr $mask{$_}, -8) & 0x7fffffff } qw(SigIgn SigBlk);    # Signals 1 to 31
PL
    system("chmod -R a+rX $cgi") == 0 or die;
    my $apache = answer_of($aport, {}, GET => '/cgi-bin/signals.pl');
    like $apache->{body}, qr/\Aignored [0-9a-f]{8} blocked 00000000\n\z/, 'mod_cgi: the masks';
    is_deeply answer_of($srv->port, {}, GET => '/cgi-bin/signals.pl'), $apache,
        "Perennial's CGI: the same ($apache->{body})";
};

subtest 'a script that prints nothing: 500, and the log in Apache\'s words' => sub {
    write_file("$cgi/silent.pl", "#!/usr/bin/perl\nexit 0;\n", 0755);
    system("chmod -R a+rX $cgi") == 0 or die;
    is answer_of($aport, {}, GET => '/cgi-bin/silent.pl')->{status}, 500, 'mod_cgi: 500';
    for my $mode (@modes) {
        is answer_of($srv->port, {}, GET => "/$mode/silent.pl")->{status}, 500, "/$mode: 500";
    }
    wait_until(sub { slurp("$run/error.log") =~ /End of script output before headers/ },
        10, 'Apache logs it');
    my @said
        = $srv->error_log =~ /silent\.pl \(request GET \S+\): End of script output before headers/g;
    is scalar @said, 3, 'and so does Perennial, in each mode';
};

subtest 'a script that closes its output and runs on: answered, then ended, as by mod_cgi' => sub {
    my $marks = "$dir/marks";
    mkdir $marks;
    chmod 0777, $marks;
    write_file("$cgi/closes.pl", <<"PL", 0755);
#!/usr/bin/perl
\$| = 1;
my \$mark = "$marks/\$ENV{QUERY_STRING}";
open my \$pid, '>', "\$mark.pid" or die; print \$pid \$\$; close \$pid;
print "Content-Type: text/plain\\n\\nanswered\\n";
close STDOUT; close STDERR;
sleep 10;
open my \$done, '>', "\$mark.done" or die; close \$done;
PL
    system("chmod -R a+rX $cgi") == 0 or die;
    for my $server (['mod_cgi', $aport, '/cgi-bin'], ['Perennial', $srv->port, '/cgi-bin']) {
        my ($name, $port, $path) = @$server;
        my $answer = answer_of($port, {}, GET => "$path/closes.pl?$name");
        is_deeply [@$answer{qw(status body)}], [200, "answered\n"], "$name: the answer";
        my $pid = do { local (@ARGV, $/) = "$marks/$name.pid"; <> };
        wait_until(sub { !kill 0, $pid }, 20, "$name: the script's process ends");
        ok !-e "$marks/$name.done", "$name: ended by the server, not by running to its end";
    }
    like $srv->error_log,
        qr{closes\.pl \(request GET /cgi-bin/closes\.pl\?Perennial\): still running after its response: TERM},
        'the log says so';
};

# The form of that idiom that keeps its standard error: mod_cgi reads that to its end (for
# Timeout at most) before it ends the request, so the script runs to its end and what it logs
# is logged. (Perennial answers the client when the output ends; mod_cgi when both have.)
subtest 'a script that closes only its output and works on, logging: it runs to its end' => sub {
    my $marks = "$dir/marks";
    write_file("$cgi/works_on.pl", <<"PL", 0755);
#!/usr/bin/perl
\$| = 1;
print "Content-Type: text/plain\\n\\nanswered\\n";
close STDOUT;
sleep 1;
print STDERR "worked on for \$ENV{QUERY_STRING}\\n";
open my \$done, '>', "$marks/\$ENV{QUERY_STRING}.worked" or die; close \$done;
PL
    system("chmod -R a+rX $cgi") == 0 or die;
    for my $server (['mod_cgi', $aport], ['Perennial', $srv->port]) {
        my ($name, $port) = @$server;
        my $answer = answer_of($port, {}, GET => "/cgi-bin/works_on.pl?$name");
        is_deeply [@$answer{qw(status body)}], [200, "answered\n"], "$name: the answer";
        ok wait_until(sub { -e "$marks/$name.worked" }, 20, "$name: the script's end"),
            "$name: the script ran to its end";
    }
    ok wait_until(sub { slurp("$run/error.log") =~ /worked on for mod_cgi/ }, 10, 'logged'),
        'mod_cgi logs what it wrote to its standard error after its output';
    ok wait_until(
        sub { $srv->error_log =~ m{stderr from \S+/works_on\.pl: worked on for Perennial$}m },
        10, 'logged'),
        'and so does Perennial';
    unlike $srv->error_log, qr{works_on\.pl.*TERM}, 'which did not end it';
};

$srv->stop;

subtest 'no ErrorLog: the log is stderr, which a script\'s children have too' => sub {
    my $alone = start_server(
        workers       => 1,
        log_on_stderr => 1,
        conf          => script_location('/perlrun', $cgi, 'ModPerl::PerlRun')
            . script_location('/registry', $cgi)
    );
    my $want = answer_of($aport, {'content-type' => 1}, GET => '/cgi-bin/children.pl');
    for my $mode (qw(perlrun registry)) {
        is_deeply answer_of($alone->port, {'content-type' => 1}, GET => "/$mode/children.pl"),
            $want, "/$mode: the answer, as mod_cgi's";
    }
    my @stderr = $alone->error_log =~ /stderr from \S+children\.pl: 7 to stderr$/mg;
    is scalar @stderr, 2, "the child's stderr, logged once each time";
    $alone->stop;
};
kill TERM => $apid;
done_testing;
