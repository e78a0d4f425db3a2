use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(files_and_app raw_request scratch_dir start_server write_file);

# MergeSlashes On, Apache's default: a run of slashes in a request's path is one slash where
# locations and files are found (//index.html is /index.html), before its dot segments go, as
# ap_normalize_path does; REQUEST_URI keeps what the client sent. Off, and for a PSGI application
# named on the command line (plackup's way, whose conformance suite wants the path as sent),
# the path stays as it came.
my $dir = scratch_dir();
write_file("$dir/show.psgi",
    q{sub { [200, ['Content-Type' => 'text/plain'], ["$_[0]{SCRIPT_NAME}|$_[0]{PATH_INFO}|$_[0]{REQUEST_URI}\n"]] }}
);
system("chmod -R a+rX $dir") == 0 or die;
my $site = files_and_app({'index.html' => "the index\n", 'sub/page.html' => "a page\n"},
    "$dir/show.psgi");

sub ask ($srv, $path) {
    my $out = raw_request($srv->port, "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my ($status) = $out =~ m{\AHTTP/1\.1 (\d+)};
    my ($body)   = $out =~ /\r\n\r\n(.*)\z/s;
    return [$status, $body];
}

my $srv = start_server(workers => 1, conf => $site);
is_deeply ask($srv, '//index.html'),       [200, "the index\n"], '//index.html is /index.html';
is_deeply ask($srv, '/sub//page.html'),    [200, "a page\n"],    'a run in the middle';
is_deeply ask($srv, '///sub///page.html'), [200, "a page\n"],    'longer runs';
is_deeply ask($srv, '/app//x//y'), [200, "/app|/x/y|/app//x//y\n"],
    'an application: its location found, PATH_INFO merged, REQUEST_URI as sent';
is_deeply ask($srv, '/sub//..//index.html'), [200, "the index\n"],
    'merged before the dot segments go: /sub/../index.html';
like $srv->access_log, qr{"GET //index\.html HTTP/1\.1" 200}, 'the access log has the line as sent';
$srv->stop;

$srv = start_server(workers => 1, conf => "MergeSlashes Off\n$site");
is ask($srv, '//index.html')->[0], 404, 'MergeSlashes Off: //index.html is not found';
$srv->stop;

$srv = start_server(workers => 1, args => ["$dir/show.psgi"]);
is_deeply ask($srv, '//foo///bar/baz'), [200, "|//foo///bar/baz|//foo///bar/baz\n"],
    'perennial serve app.psgi: the path as sent, as under plackup';
$srv->stop;
done_testing;
