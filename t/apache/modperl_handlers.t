use v5.36;
use lib 't/lib';
use Test::More;
use File::Path              qw(make_path);
use MIME::Base64            qw(encode_base64);
use Perennial::Test         qw(scratch_dir slurp start_server wait_until write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_head start_apache);

# A small mod_perl 2 application (t/modperl_app: response handlers of each kind, access,
# authentication, authorization, header parser, fixup, log and cleanup handlers, PerlSetVar, an
# internal redirect, custom_response) under Apache + mod_perl 2 and under Perennial with the
# same configuration lines: every answer must be the same, and so must what the log and cleanup
# handlers saw
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my (%dir, %port, $apid, $srv);
for my $who (qw(apache perennial)) {
    my $dir = $dir{$who} = scratch_dir();
    system('cp', '-R', "t/modperl_app/$_", "$dir/$_") == 0
        or die "Can't copy $_\n"
        for qw(lib scripts);
    make_path(map {"$dir/$_"} qw(htdocs/early htdocs/static-guarded logs));
    write_file("$dir/htdocs/file.txt",             "static\n");
    write_file("$dir/htdocs/early/a.txt",          "early\n");
    write_file("$dir/htdocs/static-guarded/b.txt", "guarded\n");
    utime 1_000_000_000, 1_000_000_000, glob "$dir/htdocs/*.txt $dir/htdocs/*/*.txt";
    system("chmod -R a+rX $dir && chmod a+rwx $dir/logs") == 0 or die;
}
my $site = slurp('t/modperl_app/site.conf');
my $run  = scratch_dir();
write_file(
    "$dir{apache}/apache.conf",
    apache_head(
        $dir{apache}, 'HANDLERS_PORT',
        qw(authz_core authz_user authn_core auth_basic alias mime perl)
        )
        . $site =~ s/\@DIR\@/$dir{apache}/gr
);
($apid, $port{apache}) = start_apache("$dir{apache}/apache.conf", 'HANDLERS_PORT', SITE_RUN => $run)
    or BAIL_OUT(
    'Apache did not start: ' . join ' ',
    map { -e $_ ? slurp($_) : () } "$run/apache.out",
    "$run/error.log"
    );

# Perennial's has a PSGI application beside the handlers, in the same worker
write_file("$dir{perennial}/env.psgi",
          "sub { my \$child = join ',', grep { /\\AMOD_PERL=/ } split /\\n/, `env`;\n"
        . "  [200, ['Content-Type' => 'text/plain'],\n"
        . "    ['MOD_PERL=', \$ENV{MOD_PERL} // '(unset)', ' child: ', \$child || '(none)']] }\n");
$srv = start_server(
    workers => 1,
    conf    => "ServerName localhost\n"
        . $site =~ s/\@DIR\@/$dir{perennial}/gr
        . "<Location /psgienv>\n    SetHandler psgi\n    PSGIApp $dir{perennial}/env.psgi\n</Location>\n"
);
$port{perennial} = $srv->port;

my $alice    = 'Authorization: Basic ' . encode_base64('alice:secret', '');
my @requests = (
    ['/hello/x/y?a=1'],
    ['/hello'],
    ['/hello/file.txt'],
    ['/plain'],
    ['/method'],
    ['/arrow'],
    (   map { ["/codes?$_"] }
            qw(empty status notfound redirect custom customurl internal declined
            done die last cleanups pushed printhead stdout one err_headers printed typed badhead badname
            childenv x)
    ),
    (map { ["/codes?$_"] } qw(customscript custom401)),
    (   map { ["/pcodes?$_"] }
            qw(empty status redirect custom internal declined stdout printed childenv)
    ),
    (map { ["/hcodes?$_"] } qw(printhead stdout status)),
    ['/codes/file.txt?declined'],
    ['/guarded'],
    ['/guarded', 'X-Let-In: yes'],
    ['/auth'],
    ['/auth', $alice],
    ['/auth', 'Authorization: Basic ' . encode_base64('alice:wrong', '')],
    ['/auth', 'Authorization: Basic ' . encode_base64('bob:secret',  '')],
    ['/auth', 'Authorization: Digest username="alice"'],
    ['/authnoreq'],
    ['/authonly', 'Authorization: Basic ' . encode_base64('bob:secret', '')],
    ['/early/a.txt'],
    ['/early/forbidden-early'],
    ['/static-guarded/b.txt'],
    ['/static-guarded/b.txt',    'X-Let-In: yes'],
    ['/static-guarded/none.txt', 'X-Let-In: yes'],
    ['/registry/notes.pl'],
    ['/registry/notes.pl/more'],
    (   map { (["/plainreg/cgipm.pl$_"], ["/registry/cgipm.pl$_"]) } '?what=plain&b=2',
        '', '?what=crlf', '?what=utf8'
    ),
);

# The fields the application's choices decide; Date, Server, framing and keep-alive are the
# server's
my %COMPARED = map { $_ => 1 } qw(content-type location x-handler x-err x-out www-authenticate
    last-modified etag set-cookie content-disposition);

for my $req (@requests) {
    my ($path, @headers) = @$req;
    my $want = answer_of($port{apache},    \%COMPARED, GET => $path, @headers);
    my $got  = answer_of($port{perennial}, \%COMPARED, GET => $path, @headers);
    my $what = "GET $path" . (@headers ? " ($headers[0])" : '');

    # Apache adds its page for a status that is not one after a handler's body; Perennial
    # sends the body alone (and says why in the log)
    $want->{body} =~ s/<!DOCTYPE HTML.*\z//s if $path eq '/codes?one';
    is $got->{status}, $want->{status}, "$what: status $want->{status}";
    is_deeply $got->{head}, $want->{head}, "$what: headers";
    is $got->{body}, $want->{body}, "$what: body"
        or diag 'Perennial: ', $srv->error_log =~ /([^\n]*\[(?:error|warn)\][^\n]*)/g;
}

# A HEAD request too: its log handler's bytes_sent is the body as Apache counts it, before
# HEAD's body is dropped
for my $server (qw(apache perennial)) {
    is answer_of($port{$server}, {}, HEAD => '/hello')->{body}, '', "$server: HEAD /hello, no body";
}

# The log and cleanup phases ran after each /hello request, in order, with the final status
# (after the response: the last request's may still be on its way)
my $lines = sub ($server) { [split /\n/, slurp("$dir{$server}/logs/phases.log")] };
wait_until(sub { @{$lines->('perennial')} >= @{$lines->('apache')} }, 10, 'the last phases');
my @phases = map { $lines->($_) } qw(apache perennial);
ok scalar(@{$phases[0]}), 'the log and cleanup handlers ran under Apache';
is_deeply $phases[1], $phases[0], 'and under Perennial they saw the same requests, in order'
    or diag explain \@phases;

# CGI.pm preloaded answers as under Apache in Perennial too (after the phases' log is
# compared: these go to Perennial only); where
# ModPerl::Registry is wrong, Perennial answers as mod_cgi does: a status of the script's own
# is the response's (Apache sends 200 and its error page after the script's body), and a
# redirect with no body has none (Apache adds its page)
for my $loc (qw(plainreg registry)) {
    my $status = answer_of($port{perennial}, \%COMPARED, GET => "/$loc/cgipm.pl?what=status");
    is_deeply [@$status{qw(status body)}], [404, "not here\n"],
        "/$loc: CGI.pm's header with a status of its own";
    my $moved = answer_of($port{perennial}, \%COMPARED, GET => "/$loc/cgipm.pl?what=redirect");
    is_deeply [@$moved{qw(status body)}, grep {/^location/} @{$moved->{head}}],
        [302, '', 'location: /hello'], "/$loc: CGI.pm's redirect";
}

# A handler that dies with an exception object that is false dies all the same (Perennial only:
# mod_perl looks at $@ as a boolean and answers 200), and its text is logged
is answer_of($port{perennial}, {}, GET => '/codes?falseobj')->{status}, 500,
    'a handler that dies with a false exception object: 500';

# The ETag of a response that is no file: Apache's is its time in microseconds, weak when it is
# made within a second of the request's start (the two servers' times differ, so each is
# compared with its own request's). Apache's, on a loaded machine, was once strong (its time
# and the request's more than a second apart): the reference's own timing, not looked at.
for my $server (qw(apache perennial)) {
    my $asked = time;
    my @head  = @{answer_of($port{$server}, {etag => 1}, GET => '/codes?etag')->{head}};
    my ($weak, $tag) = map { m{\Aetag: (W/)?"([0-9a-f]+)"\z} ? ($1, $2) : () } @head;
    no warnings 'portable';    ## no critic (ProhibitNoWarnings) microseconds pass 32 bits
    ok defined $tag && abs(hex($tag) / 1e6 - $asked) < 5 && ($weak || $server eq 'apache'),
        "$server: the ETag of a response that is no file is its time"
        . ($server eq 'apache' ? '' : ', weak')
        or diag explain \@head;
}

# A request's object is let go once its response has gone, whichever way the request took: the
# direct way, or the whole way, which a % in the URL takes (Perennial only: which of Apache's
# children answers the second request is not known)
for my $path ('/codes?weak', '/codes?weak&way=%77hole') {
    answer_of($srv->port, {}, GET => $path);
    is answer_of($srv->port, {}, GET => $path)->{body}, "the last request object: gone\n",
        "$path: the object of the request before is gone";
}

# A handler's forked child that returns ends there (Perennial only: under Apache it would go
# on as a second server process)
my $worker = ($srv->slots)[0]{pid};
my $forked = answer_of($srv->port, {}, GET => '/codes?fork');
is_deeply [@$forked{qw(status body)}], [200, "child status 0\n"],
    'a forked child that returns from the handler ends, and the parent answers';
is_deeply [map { $_->{pid} } $srv->slots], [$worker], 'the one worker serves on';
is answer_of($srv->port, {}, GET => '/hello')->{status}, 200, 'the next request is answered';

# What subprocess_env put into %ENV is gone by the next request (Perennial only: which of
# Apache's children answers the second request is not known)
is answer_of($srv->port, {}, GET => '/codes?envset')->{body}, "DEMO_CARRIED=set\n",
    'subprocess_env in void context sets %ENV';
is answer_of($srv->port, {}, GET => '/codes?envread')->{body}, "DEMO_CARRIED=(unset)\n",
    'and the next request does not see it';

# MOD_PERL is in %ENV while a handler runs, and not after: a PSGI application served next in the
# same worker does not see it, nor a program it starts (Perennial only), whichever way the
# handler ended (a return value whose number dies included), and when the handler set it itself
for my $path ('/codes?childenv', '/codes?die', '/codes?internal', '/codes?ownmodperl',
    '/codes?badrc')
{
    answer_of($srv->port, {}, GET => $path);
    is answer_of($srv->port, {}, GET => '/psgienv')->{body}, 'MOD_PERL=(unset) child: (none)',
        "after $path, the PSGI application does not see MOD_PERL";
}

# Every refusal is in the error log, with the phase that made it
my $log = $srv->error_log;
like $log, qr/refused by PerlAccessHandler \(403\): GET \/guarded/, 'an access refusal is logged';
like $log, qr/PerlResponseHandler Demo::Codes failed: handler died on purpose/,
    'a handler that died is logged with its name';
like $log, qr/PerlResponseHandler Demo::Codes failed: a false exception object/,
    "and its object's text is logged";
like $log, qr/PerlResponseHandler Demo::Codes failed: Can.t "last"/,
    'a handler that left by last is logged as perl says it';
like $log, qr/PerlCleanupHandler pool cleanup failed in worker \d+: Can.t "last"/,
    'so is a cleanup, and the cleanups after it run (the phases log above)';
like $log, qr/PerlResponseHandler: header 'X-Bad' from script holds a CR or LF/,
    'a head that cannot be sent is logged';
like $log, qr/PerlResponseHandler returned 1 after it sent a body: the body stands/,
    'a return value that is not an answer is logged';
$srv->stop;

done_testing;
