use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use IO::Socket::IP;
use Perennial::Test          qw(raw_request scratch_dir wait_until);
use Perennial::Test::Scripts qw(start_script_server);

# One fixture script per behaviour, each requested three times through every mode against a
# single worker, with what each mode must answer written beside it (mod_cgi is the truth
# except where the Registry's persistence is the point).
my $srv   = start_script_server();
my @cases = (

    # script, [expected bodies for cgi-bin, perlrun, registry] over three requests
    [   'count.pl',
        {   'cgi-bin' => [('counted 1') x 3],
            perlrun   => [('counted 1') x 3],
            registry  => ['counted 1', 'counted 2', 'counted 3']
        }
    ],
    [   'closure.pl',
        {   'cgi-bin' => [('Counter: 1') x 3],
            perlrun   => [('Counter: 1') x 3],
            registry  => ['Counter: 1', 'Counter: 2', 'Counter: 3']
        }
    ],
    [   'data.pl',
        {   map { $_ => [('data: 2 lines, first: first data line') x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    [   'data_close.pl',
        {   map { $_ => [("first: line one\nafter the end: nothing") x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    [   'data_package.pl',
        {   map { $_ => [('Blog::DATA: 2 lines, first: template line') x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    [   'own_package.pl',
        {   'cgi-bin' => [('tally x') x 3],
            perlrun   => [('tally x') x 3],
            registry  => ['tally x', 'tally xx', 'tally xxx']
        }
    ],
    ['module_end.pl', {map { $_ => [('ledger open') x 3] } qw(cgi-bin perlrun registry)}],
    ['end.pl',        {map { $_ => [("body\nEND ran") x 3] } qw(cgi-bin perlrun registry)}],
    [   'end_last.pl',
        {   map { $_ => [("body\nthird END\nsecond END\nfirst END") x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    [   'phases.pl',
        {   'cgi-bin' => [('BEGIN CHECK INIT main') x 3],
            perlrun   => [('BEGIN CHECK INIT main') x 3],
            registry  => ['BEGIN CHECK INIT main', 'main', 'main']
        }
    ],
    ['exit1.pl', {map { $_ => [('before exit(1)') x 3] } qw(cgi-bin perlrun registry)}],
    [   'cwd.pl',
        {   map {
                my $d = Cwd::abs_path('t/cgi-bin');
                $_ => [("cwd=$d\ndata.txt=beside the scripts") x 3]
            } qw(cgi-bin perlrun registry)
        }
    ],
    [   'uselib.pl',
        {   map { $_ => [("hello from a script-local library\nlib dirs in \@INC: 1") x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    ['inc.pl', {map { $_ => [('lib dirs in @INC: 0') x 3] } qw(cgi-bin perlrun registry)}],
    [   'layers_utf8.pl',
        {map { $_ => [("smile \xe2\x98\xba caf\xc3\xa9") x 3] } qw(cgi-bin perlrun registry)}
    ],
    [   'layers_open.pl',
        {map { $_ => [("open \xe2\x98\xba caf\xc3\xa9") x 3] } qw(cgi-bin perlrun registry)}
    ],
    [   'layers_crlf.pl',
        {map { $_ => [("a\r\nb\r\nwide \xe2\x98\xba") x 3] } qw(cgi-bin perlrun registry)}
    ],
    [   'output.pl',
        {   map { $_ => [("syswrite ok\nselect and autoflush ok\nscript=path\nbegin=ran") x 3] }
                qw(cgi-bin perlrun registry)
        }
    ],
    [   'globals.pl',
        {   map {
                $_ => [
                    (         "ALRM=undef RS=1 OFS=undef umask=022\n"
                            . "ORS=undef LS=1 2 SS=FS ERR=empty W=0 T=fresh INC=clean ARGV=0"
                    ) x 3
                ]
            } qw(cgi-bin perlrun registry)
        }
    ],

    # A umask set through POSIX, or by a module the script loads, is put back all the same
    # (with the C build, only after a request in which a umask ran)
    (   map {
            [$_, {map { $_ => [('umask=022') x 3] } qw(cgi-bin perlrun registry)}]
        } qw(umask_posix.pl umask_module.pl)
    ),
);
use Cwd ();
umask 022;

for my $case (@cases) {
    my ($script, $expect) = @$case;
    for my $mode (sort keys %$expect) {
        my @got = map {
            my $r = $srv->get("/$mode/$script");
            $r->{status} == 200 ? $r->{content} =~ s/\n\z//r : "status $r->{status}"
        } 1 .. 3;
        is_deeply \@got, $expect->{$mode}, "$script under /$mode";
    }
}

for my $mode (qw(cgi-bin perlrun registry)) {
    subtest "exit ends the request, not the worker: /$mode" => sub {
        my $worker = ($srv->slots)[0]{pid};
        my $res    = $srv->get("/$mode/exit.pl");
        is $res->{status}, 200, 'answered';
        like $res->{content}, qr/\Abefore exit \d+\n\z/, 'output up to exit, nothing after';
        is + ($srv->slots)[0]{pid}, $worker, 'the same worker serves on';
        my $eval = $srv->get("/$mode/eval_exit.pl")->{content};
        if ($mode eq 'cgi-bin') {
            is $eval, '', 'exit inside eval ends the process, as in any perl';
        }
        else { is $eval, "caught: yes\n", 'exit inside eval is caught, as under mod_perl' }
    };
    subtest "die and compile errors: 500, logged with path and line: /$mode" => sub {
        my $res = $srv->get("/$mode/die_early.pl");
        is $res->{status}, 500, 'die before output: 500';
        unlike $res->{content}, qr/died before/, 'no internals in the page';
        my $line = $srv->get("/$mode/die_line.pl");
        is $srv->get("/$mode/syntax_error.pl")->{status}, 500, 'syntax error: 500';
        is $srv->get("/$mode/syntax_error.pl")->{status}, 500,
            'and again: the failed compile is retried';
        my $log = $srv->error_log;
        like $log, qr{die_early\.pl.*died before any output}, 'the die is logged with the script';
        like $log, qr{died on purpose at \S*die_line\.pl line 4}, 'line numbers are the file\'s';
        like $log, qr{syntax_error\.pl line 3},                   'compile errors name the line';
    };
    subtest "CGI/1.1 environment: /$mode" => sub {
        my $res = $srv->get("/$mode/env.pl/extra/path?a=b",
            headers => {'X-Test' => 'yes', 'Proxy' => 'http://evil/'});
        my $body = $res->{content};
        like $body, qr/^GATEWAY_INTERFACE=CGI\/1\.1$/m,  'GATEWAY_INTERFACE';
        like $body, qr/^SCRIPT_NAME=\/$mode\/env\.pl$/m, 'SCRIPT_NAME';
        like $body, qr/^PATH_INFO=\/extra\/path$/m,      'PATH_INFO';
        like $body, qr/^QUERY_STRING=a=b$/m,             'QUERY_STRING';
        like $body, qr/^HTTP_X_TEST=yes$/m,              'request headers as HTTP_*';
        like $body, qr/^HTTP_PROXY=\(unset\)$/m,         'no HTTP_PROXY (httpoxy)';
        like $body, qr/^SERVER_SOFTWARE=Perennial$/m,    'SERVER_SOFTWARE';
        like $body, qr/^child sees: CGI\/1\.1$/m,        'child processes see the CGI variables';
        like $srv->get("/$mode/env.pl")->{content}, qr/^LEAKED=\(unset\)$/m,
            '%ENV changes do not leak';
        my $post = HTTP::Tiny->new->post(
            "http://127.0.0.1:" . $srv->port . "/$mode/env_read.pl",
            {   content => 'a=1',
                headers => {'Content-Type' => 'text/x-once', 'X-Once' => 'here'}
            }
        )->{content};
        like $post, qr/^CONTENT_LENGTH=3\nCONTENT_TYPE=text\/x-once\nHTTP_X_ONCE=here$/m,
            'a POST sees its body\'s variables';
        like $srv->get("/$mode/env_read.pl")->{content},
            qr/^CONTENT_LENGTH=\(unset\)\nCONTENT_TYPE=\(unset\)\nHTTP_X_ONCE=\(unset\)$/m,
            'the next request does not';
    };
    subtest "STDIN is the body, binary-safe: /$mode" => sub {
        my $body = join '', map {chr} 0 .. 255;
        my $res  = HTTP::Tiny->new->post("http://127.0.0.1:" . $srv->port . "/$mode/stdin.pl",
            {content => $body});
        is $res->{content}, '256:' . unpack('H*', $body), 'every byte';
        my $big = join '', map { chr($_ % 251) } 1 .. 200_000;
        $res = HTTP::Tiny->new->post("http://127.0.0.1:" . $srv->port . "/$mode/stdin.pl",
            {content => $big});
        is $res->{content}, '200000:' . unpack('H*', $big),
            'a body large enough to be spooled to a file';
    };
    subtest "CGI headers as mod_cgi reads them: /$mode" => sub {
        my $res = $srv->get("/$mode/status.pl");
        is $res->{status}, 404, 'Status: 404';
        $res = $srv->get("/$mode/redirect.pl", max_redirect => 0);
        is $res->{status},            302,                            'Location with a URL: 302';
        is $res->{headers}{location}, 'http://example.com/elsewhere', 'to it';
        $res = $srv->get("/$mode/local_redirect.pl", max_redirect => 0);
        is $res->{status}, 200, 'Location with a local path: internal redirect';
        like $res->{content}, qr/first data line/, 'the target answered';
        my $raw = raw_request($srv->port,
            "GET /$mode/cookies.pl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        like $raw, qr/Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n/, 'repeated headers, CRLF input';
        is $srv->get("/$mode/noheader.pl")->{status}, 500, 'no header: 500';
        is $srv->get("/$mode/inject.pl")->{status},   500, 'CR in a header value: 500';
        $res = $srv->get("/$mode/nph-status.pl");
        is $res->{status}, 203, 'nph-: its own status line';
        like $srv->error_log, qr/malformed header from script/, 'malformed headers logged';
        like $srv->error_log, qr/holds a CR or LF/,             'injection logged';
    };
    subtest "output streams when the script flushes: /$mode" => sub {
        my $marker = $srv->dir . "/marker-$mode";
        my $sock   = $srv->connect;
        $sock->syswrite(
            "GET /$mode/stream.pl?$marker HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        my $got = '';
        ok wait_until(sub { sysread($sock, $got, 4096, length $got); $got =~ /part one/ },
            10, 'first part'),
            'the first part arrived while the script waits';
        open(my $fh, '>', $marker) or die $!;
        close $fh;
        local $/;
        $got .= <$sock>;
        like $got, qr/marker seen: yes/, 'and the script saw that it had';
    };
    subtest "large output streams whole and in order: /$mode" => sub {
        my $res  = $srv->get("/$mode/big.pl");
        my @rows = split /\n/, $res->{content};
        is scalar(@rows), 20000, 'every line';
        is_deeply [@rows[0, 9999, 19999]], ['000001', '010000', '020000'], 'in order';
    };
    subtest "warnings go to the error log with the script: /$mode" => sub {
        is $srv->get("/$mode/warn.pl")->{content}, "after warn\n", 'output unaffected';
        like $srv->error_log, qr/warn\.pl.*a warning from the script/, 'logged';
    };
    subtest "ISINDEX query words are \@ARGV, CGI.pm state never bleeds: /$mode" => sub {
        is $srv->get("/$mode/argv.pl?one+two")->{content}, "argv=one|two\n", '@ARGV';
        is $srv->get("/$mode/params.pl?x=1")->{content},   "x=1\n",          'a parameter';
        is $srv->get("/$mode/params.pl")->{content},       "x=(none)\n", 'gone on the next request';
    };
}

like $srv->error_log, qr/Variable "\$counter" will not stay shared/, 'the closure trap is logged';
like $srv->error_log, qr/own_package\.pl: Variable "\$seen" will not stay shared/,
    'also for a script with no warnings of its own';
unlike $srv->error_log, qr/Too late to run/,
    'CHECK and INIT blocks run, so perl\'s warning is not logged';
is scalar(() = $srv->error_log =~ /stderr from \S*output\.pl: to stderr/g), 9,
    'STDERR lines are logged with the script, in every mode';

subtest 'a changed locale is put back; /o and handles left open are said once' => sub {
    for my $mode (qw(cgi-bin perlrun registry)) {
        my @got = map { $srv->get("/$mode/lint.pl")->{content} } 1 .. 3;
        like $got[0], qr/\Alocale=\S+ matched=yes\n\z/, "/$mode: runs";
        is_deeply [@got[1, 2]], [@got[0, 0]], "/$mode: every request starts from the same locale";
    }
    my $log = $srv->error_log;
    is scalar(() = $log =~ m{lint\.pl: uses the /o regex flag}g), 1,
        '/o is said once, for the resident copy';
    is scalar(() = $log =~ m{lint\.pl: file handle\(s\) KEPT still open after the request}g),
        1, 'so is the handle left open in the package';
};

for my $mode (qw(perlrun registry)) {
    subtest "mod_perl's request object: /$mode" => sub {
        for (1 .. 2) {
            my $res = $srv->get("/$mode/request.pl?accept=1", headers => {'X-Test' => 'yes'});
            is $res->{status},                  202,              'status set through $r';
            is $res->{headers}{'content-type'}, 'text/plain',     'content type';
            is $res->{headers}{'x-served-by'},  'request object', 'headers_out';
            is_deeply $res->{headers}{'set-cookie'}, ['a=1', 'b=2'], 'err_headers_out, repeated';
            is $res->{content},
                "method=GET uri=/$mode/request.pl args=accept=1 x=yes file=request.pl\n"
                . "printed through \$r\n", 'the request as $r tells it; print and $r->print';
        }
        my $res = $srv->get("/$mode/request1.pl");
        is $res->{status},                  200,         'mod_perl 1: Apache->request';
        is $res->{headers}{'content-type'}, 'text/html', 'send_http_header';
        is $res->{headers}{pragma},         'no-cache',  'no_cache';
        is $res->{content}, "<p>sent by GET /$mode/request1.pl HTTP/1.1</p>\n", 'the_request';
        $res = $srv->get("/$mode/request_head.pl?redirect", max_redirect => 0);
        is $res->{status},            302, 'a Location set through $r redirects, as a printed one';
        is $res->{headers}{location}, 'http://example.com/moved', 'to it';
        $res = $srv->get("/$mode/request_head.pl?bad");
        is $res->{status}, 500, 'a CR or LF in a value set through $r: 500';
        ok !exists $res->{headers}{'set-cookie'}, 'and nothing injected';
        like $srv->error_log, qr/request_head\.pl.*header 'X-Bad' from script holds a CR or LF/,
            'logged with the script';
        $res = $srv->get("/$mode/request_mp1.pl?b=2&a=x+y");
        is $res->{content}, "a=x y,b=2 first=same\n",
            'Apache->request: the object of `shift`, args as pairs (mod_perl 1)';
        my $spot = scratch_dir();
        chmod 0777, $spot;    # Scripts may run as www-data
        my $mark = "$spot/cleanup.$mode";
        is $srv->get("/$mode/request_cleanup.pl?$mark")->{content}, "ok\n", 'cleanups: answered';

        # They run after the response has gone, as under mod_perl
        wait_until(sub { -s $mark && $srv->error_log =~ /cleanup died on purpose/ },
            10, 'the cleanups');
        like $srv->error_log,
            qr/PerlCleanupHandler pushed handler failed in worker \d+: cleanup died on purpose/,
            'a cleanup that dies is logged with its phase';
        is Perennial::Test::slurp($mark), "ran, status 202\n",
            'and the pool cleanup after it still ran, and saw the response\'s status';
        is $srv->get("/$mode/redirect_loop.pl")->{status}, 500, 'a local redirect loop: 500';
        like $srv->error_log,
            qr{local redirect to /$mode/redirect_loop\.pl not followed \(too many\)},
            'after ten, logged';
        is $srv->get("/$mode/redirect_loop.pl?r")->{status}, 500, 'an internal_redirect loop: 500';
        like $srv->error_log, qr{internal_redirect to /$mode/redirect_loop\.pl\?r: more than 10},
            'logged too';
        my $pid = ($srv->slots)[0]{pid};

        for my $how (qw(exit die)) {
            my $out = raw_request($srv->port,
                      "GET /$mode/request_redirect_exit.pl?$how HTTP/1.1\r\nHost: x\r\n\r\n"
                    . "GET /$mode/count.pl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            my @answers = $out =~ m{^HTTP/1\.1 (\d+)}mg;
            is "@answers", '200 200',
                "$how after an internal_redirect: the redirect's answer, once, and the connection goes on";
        }
        is + ($srv->slots)[0]{pid}, $pid, 'the same worker: exit ended only the request';
        like $srv->error_log,
            qr/request_redirect_exit\.pl .*after its internal redirect: died after/,
            'dying after it is logged';
        is $srv->get("/$mode/request_missing.pl")->{status}, 500, 'a method not provided: 500';
        like $srv->error_log,
            qr/Perennial does not provide Apache2::RequestRec::add_output_filter at \S*request_missing\.pl line 4\./,
            'and the log names the method, the script and the line';
    };
}

subtest 'CORE::exit kills only the worker; the client gets a 500' => sub {
    my $worker = ($srv->slots)[0]{pid};
    my $out    = raw_request(
        $srv->port,
        "GET /registry/hard_exit.pl HTTP/1.1\r\nHost: x\r\n\r\n",
        timeout => 10
    );
    like $out, qr{\AHTTP/1\.1 500 }, 'a clean 500, not a hang or a silent close';
    ok wait_until(sub { my ($s) = $srv->slots; $s && $s->{pid} != $worker && $s->{state} eq '_' },
        10, 'replaced'),
        'a new worker took over';
    is $srv->get('/registry/count.pl')->{status}, 200, 'and serves';
};

for my $mode (qw(perlrun registry)) {    # A process of its own would have no STDERR after close
    is $srv->get("/$mode/stderr_close.pl")->{content}, "done\n", "/$mode/stderr_close.pl";
}
is scalar(() = $srv->error_log =~ /stderr from \S+stderr_close\.pl: after close: caf\xc3\xa9$/mg),
    2, "close STDERR keeps the script's own layer (UTF-8 here), in PerlRun and Registry";

# A script's STDERR is one handle kept for all its requests (PerlRun's too, though its script
# is compiled anew): one that unties it has it tied again
for my $mode (qw(perlrun registry)) {
    for my $query ('untie', 'after', 'again') {
        is $srv->get("/$mode/stderr_untie.pl?$query")->{content}, "ok\n",
            "/$mode/stderr_untie.pl?$query";
    }
}
is
    scalar(()
    = $srv->error_log =~ /stderr from \S+stderr_untie\.pl: stderr line from (?:after|again)$/mg),
    4, 'the requests after an untie still have their STDERR in the log, in PerlRun and Registry';

$srv->stop;
subtest 'the error log gets the bytes the layers made, whatever STDERR carries' => sub {
    my $log = $srv->error_log;
    like $log, qr/layers_open\.pl: a warning with \xe2\x98\xba/,
        'a warning through :encoding(UTF-8): its UTF-8 bytes';
    like $log, qr/\[warn\] \S*layers_open\.pl: said while compiling \xe2\x98\xba/,
        'STDERR while a resident script compiles: in the log, through its layer';
    like $log, qr/Wide character in print at \S*layers_crlf\.pl line 8\./,
        "wide characters with no layer: perl's warning, with the script's line";
};

done_testing;
