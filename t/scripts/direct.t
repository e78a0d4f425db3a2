use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir start_server wait_until write_file);

# A script URL asked again goes the direct way (Perennial::Dispatch's _direct: the plan kept
# from the first request, straight to the executor). Whatever the way through the rest would
# have done, it still does, on every request: an access rule, a redirect, an ErrorDocument for a
# script that fails, AddDefaultCharset, TRACE refused, a %-encoded path, and a file replaced or
# removed between two requests. Each URL is asked three times on one worker, and answered the same each time.
my $dir = scratch_dir();
mkdir "$dir/cgi" or die $!;
my $hello = <<'PL';
#!/usr/bin/perl
print "Content-Type: text/plain\n\n", "hello from $ENV{SCRIPT_NAME}\n";
PL
write_file("$dir/cgi/$_.pl",     $hello, 0755) for qw(hello private old moving gone folder);
write_file("$dir/cgi/odd%00.pl", $hello, 0755);    # Its name decodes as an encoded NUL
write_file("$dir/cgi/broken.pl", "#!/usr/bin/perl\nprint 'Content-Type: text/plain\n\n';\n}\n",
    0755);

my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /registry $dir/cgi
<Location /registry>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
<Location /registry/private.pl>
    Require all denied
</Location>
Redirect /registry/old.pl /registry/hello.pl
ErrorDocument 500 "Our script broke"
AddDefaultCharset utf-8
TraceEnable Off
CONF
wait_until(sub { $srv->idle == 1 }, 10, 'the worker');
my ($pid) = $srv->pids;

# The status, body and head of a request, on a connection of its own
sub asked ($target, $method = 'GET') {
    my $out = raw_request($srv->port, "$method $target HTTP/1.0\r\nHost: x\r\n\r\n");
    my ($status, $head, $body) = $out =~ m{\AHTTP/1\.[01] (\d{3})(.*?)\r\n\r\n(.*)\z}s
        or return ('none', $out, '');
    return ($status, $body, $head);
}

my @cases = (
    ['/registry/hello.pl',   200, qr/\Ahello from \/registry\/hello\.pl\n\z/, 'a script'],
    ['/registry/hello%2epl', 200, qr/\Ahello from \/registry\/hello\.pl\n\z/, 'its path %-encoded'],
    ['/registry/hello.pl/x', 200, qr/\Ahello from \/registry\/hello\.pl\n\z/, 'with a PATH_INFO'],
    ['/registry/hello.pl%2fx', 404, qr/Not Found/, 'an encoded slash (AllowEncodedSlashes Off)'],
    ['/registry/odd%2500.pl',  404, qr/Not Found/, 'a path that decodes to an encoded NUL'],
    ['/registry/private.pl',   403, qr/Forbidden/, 'a script that Require all denied closes'],
    ['/registry/old.pl',       302, qr/hello\.pl/, 'a script\'s URL that Redirect moves'],
    ['/registry/broken.pl',    500, qr/Our script broke/, 'a script that does not compile'],
);
for my $round (1 .. 3) {
    for (@cases) {
        my ($target, $status, $body, $what) = @$_;
        my ($got, $text, $head) = asked($target);
        is $got, $status, "round $round, $what: $status";
        like $text, $body, "round $round, $what: its body";
        like $head, qr{\nContent-Type: text/plain; charset=utf-8\r}i,
            "round $round, $what: AddDefaultCharset's charset"
            if $status == 200;
    }
    my ($got) = asked('/registry/hello.pl', 'TRACE');
    is $got, 405, "round $round: TRACE on a script's URL is refused (TraceEnable Off)";
}
my $errors = $srv->error_log;
my $denied = ()
    = $errors =~ /client 127\.0\.0\.1 denied by Require .*: GET \/registry\/private\.pl/g;
is $denied, 3, 'each refusal of the closed script is in the error log';
my $failed = () = $errors =~ /broken\.pl/g;
ok $failed >= 3, 'so is each failure of the broken script';

# A file replaced (a new inode) or removed between two requests: the new file, or a 404
my ($status, $body) = asked('/registry/moving.pl');
is $body, "hello from /registry/moving.pl\n", 'a script before it is replaced';
write_file("$dir/cgi/moving.pl.new",
    "#!/usr/bin/perl\nprint \"Content-Type: text/plain\\n\\nreplaced\\n\";\n", 0755);
rename "$dir/cgi/moving.pl.new", "$dir/cgi/moving.pl" or die "Can't rename: $!";
($status, $body) = asked('/registry/moving.pl');
is $body, "replaced\n", 'the new file once it is replaced';
($status) = asked('/registry/gone.pl');
is $status, 200, 'a script before it is removed';
unlink "$dir/cgi/gone.pl" or die "Can't remove: $!";
($status) = asked('/registry/gone.pl');
is $status, 404, 'a 404 once it is removed';
($status) = asked('/registry/folder.pl');
is $status, 200, 'a script before a directory takes its name';
unlink "$dir/cgi/folder.pl" or die "Can't remove: $!";
mkdir "$dir/cgi/folder.pl"  or die "Can't make a directory: $!";
my ($was, undef, $head) = asked('/registry/folder.pl');
is $was, 301, 'then the directory: mod_dir\'s redirect to its slash';
like $head, qr{\nLocation: http://x/registry/folder\.pl/\r}, 'to the directory with its slash';
is_deeply [$srv->pids], [$pid], 'all on the one worker';
$srv->stop;

done_testing;
