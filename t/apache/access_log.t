use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(raw_request scratch_dir slurp start_server wait_until write_file);
use Perennial::Test::Apache qw(apache_available apache_head start_apache);

# An access log's line is the one Apache writes: the same LogFormat and requests to Apache 2.4
# (started here) and to Perennial, with quotes, backslashes, tabs and bytes past ASCII in the
# request line and the headers, which both escape as Apache's ap_escape_logitem does. Log
# analysers (awstats, goaccess) read these lines as Apache writes them.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
write_file("$dir/cgi/echo.cgi", "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\nok\\n'\n",
    0755);
system("chmod -R a+rX $dir") == 0 or die;    # Apache's children run as www-data
my $format = '%h %l %u \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %U %q %m %H \"%{X-Test}i\"';
my $conf   = <<"CONF";
LogFormat "$format" fields
ScriptAliasMatch ^/ $dir/cgi/echo.cgi
<Directory $dir/cgi>
    Require all granted
</Directory>
CONF
my ($alog, $plog) = (scratch_dir(), scratch_dir());
chmod 0777, $_ or die $! for $alog, $plog;
write_file("$dir/apache.conf",
          apache_head($dir, 'LOG_PORT', qw(authz_core alias cgi))
        . $conf
        . "CustomLog $alog/access.log fields\n");
my ($apid, $aport) = start_apache("$dir/apache.conf", 'LOG_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => $conf . "CustomLog $plog/access.log fields\n");

my @requests = (
    [   'quotes, backslashes, a tab and bytes past ASCII in headers',
        "GET /plain?x=1 HTTP/1.0\r\nUser-Agent: q\"uote back\\slash\r\n"
            . "Referer: tab\there\r\nX-Test: high \xe9\xff end\r\n\r\n"
    ],
    ['escapes in the target are logged as sent', "GET /a%22b?c=%5C HTTP/1.0\r\n\r\n"],
    ['a quote and a backslash in the target',    "GET /q\"uote?b\\ack HTTP/1.0\r\n\r\n"],
    ['bytes past ASCII in the target',           "GET /caf\xc3\xa9?\xff HTTP/1.0\r\n\r\n"],
    ['an empty header',                          "GET /empty HTTP/1.0\r\nX-Test:\r\n\r\n"],
    ['dot segments and an escaped slash',        "GET /x/./y/../z%2Fw HTTP/1.0\r\n\r\n"],
    ['HTTP/1.1 without a Host: refused', "GET /nohost HTTP/1.1\r\nUser-Agent: a\"b\r\n\r\n"],
);

for my $i (0 .. $#requests) {
    my ($name,    $bytes)   = @{$requests[$i]};
    my ($a,       $p)       = map { raw_request($_, $bytes) } $aport, $srv->port;
    my ($astatus, $pstatus) = map { m{\AHTTP/1\.\d (\d{3})} ? $1 : 'none' } $a, $p;
    is $pstatus, $astatus, "$name: Apache's status ($astatus)";
    my $lines = $i + 1;
    my @got   = map {
        my $file = "$_/access.log";
        wait_until(sub { (() = slurp($file) =~ /\n/g) >= $lines }, 10, "line $lines");
        (split /\n/, slurp($file))[$i] // '';
    } $alog, $plog;

    # An error's body is each server's own page (Apache's in HTML): its size is not compared
    s/" ([45]\d\d) \d+ /" $1 (an error page's size) / for @got;
    is $got[1], $got[0], "$name: Apache's line";
}
like + (split /\n/, slurp("$plog/access.log"))[0],
    qr{ "tab\\there" "q\\"uote back\\\\slash" .* "high \\xe9\\xff end"\z},
    'the escapes: \\t, \\", \\\\ and \\xNN';

$srv->stop;
kill 'TERM', $apid;
waitpid $apid, 0;
done_testing;
