use v5.36;
use lib 't/lib';
use Test::More;
use Digest::MD5     qw(md5_hex);
use HTTP::Date      qw(time2str);
use Perennial::Test qw(raw_request scratch_dir start_server write_file);

# Static files from DocumentRoot and Alias, as Apache's core serves them
my $root = scratch_dir();
mkdir "$root/$_" or die $! for qw(docs docs/sub docs/idx assets scripts);
write_file("$root/docs/hello.txt",       "hello, world\n");
write_file("$root/docs/page.html",       "<p>page</p>\n");
write_file("$root/docs/sub/index.html",  "<h1>sub index</h1>\n");
write_file("$root/docs/idx/start.htm",   "<h1>start</h1>\n");
write_file("$root/docs/data.unknownext", "data\n");
write_file("$root/docs/archive.tar.gz",  "not really gzip\n");
write_file("$root/assets/style.css",     "body { color: red }\n");
write_file("$root/assets/forced.txt",    "forced\n");
write_file("$root/scripts/run.pl",
    qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\nran\\n";\n}, 0755);
write_file("$root/scripts/notes.txt", "plain notes\n");
write_file("$root/docs/page.php",     "<?php echo \$secret_password; ?>\n");
my $big = join '', map { sprintf "%07d line of a large file\n", $_ } 1 .. 20_000;
write_file("$root/docs/big.txt", $big);
utime 1_700_000_000, 1_700_000_000, "$root/docs/hello.txt" or die $!;

# Changed within the last second, as far as the server can tell (its time is ahead of the clock)
my $future = time + 3600;
write_file("$root/docs/fresh.txt", "fresh\n");
utime $future, $future, "$root/docs/fresh.txt" or die $!;

my $srv = start_server(workers => 1, conf => <<"CONF");
DocumentRoot $root/docs
Alias /assets/ $root/assets/
Alias /scripts $root/scripts
Alias /later $root/later
AddType text/x-custom .unknownext
<Directory $root/docs/idx>
    DirectoryIndex start.htm index.html
</Directory>
AddHandler application/x-httpd-php .php
<Files forced.txt>
    ForceType application/x-forced
</Files>
<Directory $root/scripts>
    Options +ExecCGI
</Directory>
CONF

sub req ($head) {
    my $out = raw_request($srv->port, "$head\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    my ($top, $body) = split /\r\n\r\n/, $out, 2;
    my ($status) = $top =~ m{\AHTTP/1\.1 (\d+)};
    my %h = map { /\A([^:]+):\s*(.*)\z/ ? (lc $1 => $2) : () } split /\r\n/, $top;
    return ($status, \%h, $body // '');
}

subtest 'a file: type, length, validators' => sub {
    my ($s, $h, $body) = req('GET /hello.txt HTTP/1.1');
    is $s,                     200,                     'status 200';
    is $body,                  "hello, world\n",        'the content';
    is $h->{'content-type'},   'text/plain',            'type from /etc/mime.types';
    is $h->{'content-length'}, 13,                      'length';
    is $h->{'last-modified'},  time2str(1_700_000_000), 'Last-Modified is the mtime';
    is $h->{etag}, sprintf('"%x-%x"', 13, 1_700_000_000 * 1_000_000),
        'ETag as Apache makes it: size and mtime in microseconds';
    is $h->{'accept-ranges'}, 'bytes', 'ranges are offered';
    is( (req('GET /fresh.txt HTTP/1.1'))[1]{etag},
        sprintf('W/"%x-%x"', 6, $future * 1_000_000),
        'a file whose time is ahead of the server\'s clock: a weak ETag, as Apache gives one that'
            . ' changed within the second before the request'
    );
    is((req('GET /page.html HTTP/1.1'))[1]{'content-type'},       'text/html',     'html');
    is((req('GET /data.unknownext HTTP/1.1'))[1]{'content-type'}, 'text/x-custom', 'AddType');
    is((req('GET /assets/forced.txt HTTP/1.1'))[1]{'content-type'},
        'application/x-forced', 'ForceType in <Files>');
    is((req('GET /assets/style.css HTTP/1.1'))[1]{'content-type'}, 'text/css', 'through an Alias');
    my ($hs, $hh, $hbody) = req('HEAD /hello.txt HTTP/1.1');
    is_deeply [$hs, $hh->{'content-length'}, $hbody], [200, 13, ''], 'HEAD: the head only';
};

subtest 'a large file arrives whole' => sub {
    my $res = $srv->get('/big.txt');
    is $res->{status},           200,           'status 200';
    is length $res->{content},   length $big,   'every byte';
    is md5_hex($res->{content}), md5_hex($big), 'the same bytes';
};

subtest 'conditional requests' => sub {
    my (undef, $h)  = req('GET /hello.txt HTTP/1.1');
    my ($etag, $lm) = @$h{qw(etag last-modified)};
    my ($s, $h304, $body) = req("GET /hello.txt HTTP/1.1\r\nIf-None-Match: $etag");
    is_deeply [$s, $body, $h304->{etag}], [304, '', $etag],
        'If-None-Match: 304, with its ETag, no body';
    is((req(qq{GET /hello.txt HTTP/1.1\r\nIf-None-Match: "other", $etag}))[0], 304,
        'one of a list');
    is((req(qq{GET /hello.txt HTTP/1.1\r\nIf-None-Match: "other"}))[0], 200, 'another tag: 200');
    is((req("GET /hello.txt HTTP/1.1\r\nIf-Modified-Since: $lm"))[0], 304,
        'If-Modified-Since: 304');
    is((req("GET /hello.txt HTTP/1.1\r\nIf-Modified-Since: " . time2str(1_600_000_000)))[0],
        200, 'modified since: 200');
    is((req(qq{GET /hello.txt HTTP/1.1\r\nIf-None-Match: "other"\r\nIf-Modified-Since: $lm}))[0],
        200, 'If-None-Match decides over If-Modified-Since');
    is((req(qq{GET /hello.txt HTTP/1.1\r\nIf-Match: "other"}))[0], 412, 'If-Match that fails: 412');
    is((req("GET /hello.txt HTTP/1.1\r\nIf-Match: $etag"))[0],     200, 'If-Match that holds: 200');
    is((req("GET /hello.txt HTTP/1.1\r\nIf-Unmodified-Since: " . time2str(1_600_000_000)))[0],
        412, 'If-Unmodified-Since before the mtime: 412');
};

subtest 'ranges' => sub {
    my ($s, $h, $body) = req("GET /hello.txt HTTP/1.1\r\nRange: bytes=0-4");
    is_deeply [$s, $body, $h->{'content-range'}, $h->{'content-length'}],
        [206, 'hello', 'bytes 0-4/13', 5],
        'one range: 206';
    is((req("GET /hello.txt HTTP/1.1\r\nRange: bytes=-6"))[2], "world\n", 'a suffix');
    is((req("GET /hello.txt HTTP/1.1\r\nRange: bytes=7-"))[2], "world\n", 'an open end');
    is((req("GET /hello.txt HTTP/1.1\r\nRange: bytes=7-100"))[2], "world\n",
        'an end past the file');
    ($s, $h, $body) = req("GET /hello.txt HTTP/1.1\r\nRange: bytes=0-1,7-8");
    is $s, 206, 'two ranges: 206';
    my ($boundary) = ($h->{'content-type'} // '') =~ m{\Amultipart/byteranges; boundary=(\S+)\z};
    ok $boundary, 'multipart/byteranges';
    is length $body, $h->{'content-length'}, 'its length is right';
    like $body,
        qr{--\Q$boundary\E\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/13\r\n\r\nhe\r\n--\Q$boundary\E\r\nContent-Type: text/plain\r\nContent-Range: bytes 7-8/13\r\n\r\nwo\r\n--\Q$boundary\E--\r\n\z},
        'each part with its range';
    is((req("GET /hello.txt HTTP/1.1\r\nRange: bytes=0-3,2-5"))[2],
        'hello,', 'overlapping ranges merge into one');
    ($s, $h) = req("GET /hello.txt HTTP/1.1\r\nRange: bytes=50-60");
    is_deeply [$s, $h->{'content-range'}], [416, 'bytes */13'], 'nothing satisfiable: 416';
    is((req("GET /hello.txt HTTP/1.1\r\nRange: lines=1-2"))[0], 200,
        'another unit: the whole file');
    is((req("GET /hello.txt HTTP/1.1\r\nRange: bytes=5-2"))[0],
        200, 'a range that does not parse: the whole file');
    is((req(qq{GET /hello.txt HTTP/1.1\r\nRange: bytes=0-4\r\nIf-Range: "old"}))[0],
        200, 'If-Range with another tag: the whole file');

    is( (req("GET /big.txt HTTP/1.1\r\nRange: bytes=100000-100099"))[2],
        substr($big, 100_000, 100),
        'a range deep in a large file'
    );
};

subtest 'directories: the slash, DirectoryIndex, and no listing' => sub {
    my ($s, $h) = req('GET /sub?x=1 HTTP/1.1');
    is $s,             301,                         'no slash: 301';
    is $h->{location}, 'http://127.0.0.1/sub/?x=1', 'to the URL with the slash, the query kept';
    is((req('GET /sub/ HTTP/1.1'))[2], "<h1>sub index</h1>\n", 'index.html by default');
    is((req('GET /idx/ HTTP/1.1'))[2], "<h1>start</h1>\n",     'DirectoryIndex in a <Directory>');
    is((req('GET / HTTP/1.1'))[0],     403,                    'no index and no Indexes: 403');
    like $srv->error_log, qr/Cannot serve directory \S+\/docs\/: No matching DirectoryIndex/,
        'and the log says why';
};

subtest 'what is never served' => sub {
    is $srv->status_of('/../' . (split m{/}, $root)[-1] . '/docs/hello.txt'), 400,
        '.. never climbs out: above the root is a bad request, as in Apache';
    is $srv->status_of('/sub/../hello.txt'), 200, 'one that stays below it is merged, as in Apache';
    is $srv->status_of('/sub%2findex.html'), 404, 'an encoded slash';
    is $srv->status_of('/hello.txt%00.html'), 404, 'a NUL byte';
    is $srv->status_of('/nothing.txt'),       404, 'a missing file';
    is $srv->status_of('/scripts/run.pl'),    403, 'a script where scripts run is not sent as text';
    like $srv->error_log, qr/run\.pl is a script in a directory with Options ExecCGI/,
        'the log says why';
    is $srv->status_of('/scripts/notes.txt'), 200, 'a text file beside it is served';
    my ($ps, undef, $pbody) = req('GET /page.php HTTP/1.1');
    is $ps, 500, 'a handler Perennial does not have (PHP): 500';
    unlike $pbody, qr/secret_password/, 'never the source';
    like $srv->error_log, qr/handler 'application\/x-httpd-php' is not one Perennial has/,
        'and the log says so';
    my ($s, $h) = req("DELETE /hello.txt HTTP/1.1\r\nContent-Length: 0");
    is_deeply [$s, $h->{allow}], [405, "GET,HEAD,POST,OPTIONS"], "DELETE on a file: 405 with Allow";
    is( (req("POST /hello.txt HTTP/1.1\r\nContent-Length: 0"))[2],
        "hello, world\n",
        "POST is answered as GET, as Apache does"
    );
};

subtest 'an Alias to a directory that comes later, as a cron job makes one' => sub {
    like $srv->error_log, qr{'\Q$root\E/later' not found: /later answers 404 until it is there},
        'the start says so';
    is $srv->status_of('/later/page.txt'), 404, 'until then, 404';
    write_file("$root/later/page.txt", "here now\n");
    is $srv->get('/later/page.txt')->{content}, "here now\n", 'then the file';
};

$srv->stop;

done_testing;
