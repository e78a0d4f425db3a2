use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir script_location start_server wait_until write_file);
use Perennial::Test::Apache qw(apache_available apache_head start_apache);

# Header fields whose names have an underscore. The parser reads a name as its environment's key,
# "-" as "_", so `Transfer_Encoding: chunked` would frame a body as Transfer-Encoding does (a
# proxy in front, which reads it as an unknown field, would not: the bytes after the head are
# the next request for one and a body for the other), and `X_Remote_User` would join the
# `X-Remote-User` a proxy sets. Apache keeps them out of a CGI script's environment and frames
# by the real fields only; each exchange below goes to Apache's mod_cgi and to Perennial's CGI
# and Registry, and the answers are compared.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();
my $dir = scratch_dir();
my $cgi = "$dir/cgi";
write_file("$cgi/who.pl", <<'PL', 0755);
#!/usr/bin/perl
my $body = do { local $/; <STDIN> } // '';
print "Content-Type: text/plain\n\n";
print join(' ', map { "$_=" . ($ENV{$_} // 'unset') }
    qw(HTTP_X_REMOTE_USER HTTP_TRANSFER_ENCODING HTTP_CONTENT_LENGTH CONTENT_LENGTH)), " body=[$body]\n";
PL
system("chmod -R a+rX $dir") == 0 or die;
my $conf = "ScriptAlias /cgi-bin/ $cgi/\n<Directory $cgi>\n    Require all granted\n</Directory>\n";
write_file("$dir/apache.conf", apache_head($dir, 'US_PORT', qw(authz_core alias cgi)) . $conf);
my ($apid, $aport) = start_apache("$dir/apache.conf", 'US_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => $conf . script_location('/registry', $cgi));
wait_until(sub { $srv->idle == 1 }, 10, 'the worker');
local $SIG{PIPE} = 'IGNORE';

# What a server answered to the bytes, on one connection: each response's status and body
sub exchange ($port, $bytes) {
    my @answers;
    my $raw = raw_request($port, $bytes, half_close => 1);
    while ($raw =~ m{\GHTTP/1\.\d (\d{3})[^\r\n]*\r\n(.*?)\r\n\r\n}sg) {
        my ($status, $head, $at, $body) = ($1, $2, pos($raw), '');
        if ($head =~ /^Transfer-Encoding: chunked/mi) {    # Apache's, for a script's output
            while ($raw =~ /\G([0-9a-f]+)\r\n/gci) {
                my $size = hex $1;
                $body .= substr $raw, pos($raw), $size;
                pos($raw) = pos($raw) + $size + 2;
                last unless $size;
            }
        }
        elsif ($head =~ /^Content-Length: (\d+)/mi) {
            $body = substr $raw, $at, $1;
            pos($raw) = $at + $1;
        }
        else { pos($raw) = length $raw }                              # To the close
        push @answers, $status >= 400 ? $status : "$status $body";    # Each server's own page
    }
    return \@answers;
}

my @cases = (
    [   'X_Remote_User beside X-Remote-User: the hyphen\'s alone',
        "GET /PATH HTTP/1.1\r\nHost: a\r\nX_Remote_User: evil\r\nX-Remote-User: good\r\n"
            . "Connection: close\r\n\r\n"
    ],
    [   'X_Remote_User alone: none',
        "GET /PATH HTTP/1.1\r\nHost: a\r\nX_Remote_User: evil\r\nConnection: close\r\n\r\n"
    ],
    [   'Transfer_Encoding: chunked frames no body; what follows is the next request',
        "POST /PATH HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n\r\n"
            . "5\r\nhello\r\n0\r\n\r\n"
    ],
    [   'Content_Length frames no body either: the bytes after the head are a request',
        "POST /PATH HTTP/1.1\r\nHost: a\r\nContent_Length: 24\r\n\r\nGET /PATH?two HTTP/1.0\r\n\r\n"
    ],
);
push @cases, (    # Found by a review: the head's end and its bytes are the parser's, as sent
    [   'a head ended by a bare LF, a CRLF blank line and an underscore line after it',
        "POST /PATH HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\nA_B: xxxxxxxxxxxx\r\r\n\r\n"
            . "helloGET /PATH?smuggled HTTP/1.0\r\n\r\n"
    ],
    [   'a bare CR in the value of a field with an underscore',
        "GET /PATH HTTP/1.1\r\nHost: a\r\nX_Y: a\rb\nConnection: close\r\n\r\n"
    ],
);
for my $case (@cases) {
    my ($what, $bytes) = @$case;
    my $apache = exchange($aport, $bytes =~ s{/PATH}{/cgi-bin/who.pl}r);
    ok scalar @$apache, "mod_cgi answers: $what" or next;
    for my $path ('/cgi-bin/who.pl', '/registry/who.pl') {
        is_deeply exchange($srv->port, $bytes =~ s{/PATH}{$path}r), $apache, "$path: $what";
    }
}
like $srv->error_log, qr/header field left out \(a name with an underscore.*\): X_Remote_User/,
    'the log says which field was left out';
like $srv->error_log, qr/left out .*: Transfer_Encoding \(request POST/, 'each time';

$srv->stop;
kill TERM => $apid;
done_testing;
