use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(scratch_dir start_server stats_during write_file);
use Perennial::HTTP::Core;
use Perennial::FileWatch;

# PerlScriptCheck Always, with the worker's file watch (Perennial::FileWatch): on a kept-alive
# connection a script is served without a stat while nothing it depends on changed, and every
# way a deploy changes it is seen by the next request on the same connection. The watch is the
# loop in C's: the pure-Perl loop looks at the file on each request.
plan skip_all => 'the file watch is the loop in C\'s'
    unless Perennial::HTTP::Core::implementation() eq 'C';

my $dir    = scratch_dir();
my $script = sub ($file, $v) {
    my $tmp = "$file.new";
    write_file($tmp, qq{print "Content-Type: text/plain\\n\\n";\nprint "$v\\n";\n}, 0755);
    rename $tmp, $file or die "Can't rename $tmp: $!";
};

write_file("$dir/static/a.txt", "a\n");

# A deploy as Capistrano's: current -> releases/N, each release a directory of its own
$script->("$dir/releases/1/cgi/x.pl", 'one');
symlink 'releases/1', "$dir/current" or die "Can't link: $!";
chmod 0755, $dir;

my $srv = start_server(workers => 1, conf => <<"CONF");
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
ParkKeepAlive Off
Alias /reg $dir/current/cgi
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
Alias /run $dir/current/cgi
<Location /run>
    SetHandler perl-script
    PerlResponseHandler ModPerl::PerlRun
    Options +ExecCGI
</Location>
Alias /static $dir/static
CONF

# One connection, kept alive, and no client that asks again on its own
my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $srv->port, Timeout => 5)
    or die "Can't connect: $@";
my $get = sub ($path) {
    $sock->syswrite("GET $path HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $out = '';
    while ($out !~ /\r\n\r\n/ || length($out) < _whole($out)) {
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        select(my $rout = $rin, undef, undef, 10) or return 'timeout';
        sysread($sock, $out, 65536, length $out)  or return 'closed';
    }
    my ($status) = $out =~ m{\AHTTP/1\.1 (\d+)};
    my ($body)   = $out =~ m{\r\n\r\n(.*)\z}s;
    return $status eq '200' ? $body =~ s/\n\z//r : $status;
};

# Each mode serves the script as it is now
my $both = sub ($want, $name) {
    is $get->('/reg/x.pl'), $want, "Registry: $name";
    is $get->('/run/x.pl'), $want, "PerlRun: $name";
};
$both->('one', 'first request');
$both->('one', 'again on the same connection') for 1 .. 2;    # The watch's first look: once

subtest 'no stat of the script on a kept-alive request that nothing changed' => sub {
    plan skip_all => 'strace is not installed' unless -x '/usr/bin/strace';
    plan skip_all => 'the scratch directory is on a filesystem the watch does not trust'
        unless Perennial::FileWatch::reported("$dir/releases/1/cgi/x.pl");
    my ($worker) = $srv->pids;
    my $stats = stats_during(
        $worker,
        sub {
            $get->($_) for map { ('/reg/x.pl', '/run/x.pl') } 1 .. 5;
        }
    );
    is $stats->{'x.pl'} // 0, 0, 'x.pl looked at by no stat';

    # A static file is not watched: it takes as many watches as there are files
    $stats = stats_during($worker, sub { $get->('/static/a.txt') for 1 .. 5 });
    is $stats->{'a.txt'}, 5, 'a static file looked at on each request';
};

write_file("$dir/releases/1/cgi/x.pl",
    qq{print "Content-Type: text/plain\\n\\n";\nprint "two\\n";\n}, 0755);
$both->('two', 'written again in place (the same inode)');

$script->("$dir/releases/1/cgi/x.pl", 'three');
$both->('three', 'a new file renamed over it');

write_file("$dir/releases/1/cgi/other.txt", "unrelated\n");
$both->('three', 'a file beside it changed: still the same script');

# The next release hard-links the unchanged script (rsync --link-dest): the same inode under
# other directories, which must be watched once current leads there
mkdir "$dir/releases/2";
mkdir "$dir/releases/2/cgi";
link "$dir/releases/1/cgi/x.pl", "$dir/releases/2/cgi/x.pl" or die "Can't link: $!";
symlink 'releases/2', "$dir/current.new" or die;
rename "$dir/current.new", "$dir/current" or die;
$both->('three', 'current swapped to a release with the same file, hard-linked');
$script->("$dir/releases/2/cgi.new/x.pl", 'four');
rename "$dir/releases/2/cgi",     "$dir/releases/2/cgi.old" or die;
rename "$dir/releases/2/cgi.new", "$dir/releases/2/cgi"     or die;
$both->('four', 'its directory in the new release replaced: the new script is seen');
$script->("$dir/releases/1/cgi/x.pl", 'old');
$both->('four', 'the old release changing is not served');

unlink "$dir/releases/2/cgi/x.pl";
$both->('404', 'removed: 404');
$script->("$dir/releases/2/cgi/x.pl", 'five');
$both->('five', 'back');

rename "$dir/releases/2/cgi", "$dir/releases/2/gone" or die;
$both->('404', 'its directory moved away: 404');
rename "$dir/releases/2/gone", "$dir/releases/2/cgi" or die;
$both->('five', 'and back');

chmod 0700, "$dir/releases/2/cgi";    # The workers' user may no longer go in
isnt $get->('/reg/x.pl'), 'five', 'a directory on its path closed to the worker: not served';
chmod 0755, "$dir/releases/2/cgi";
$both->('five', 'opened again');

# A library the script uses, from outside perl's own directories, changes
write_file("$dir/lib/My/Lib.pm", qq{package My::Lib;\nsub v { "lib one" }\n1;\n});
write_file(
    "$dir/releases/2/cgi/y.pl",
    qq{use lib "$dir/lib";\nuse My::Lib;\nprint "Content-Type: text/plain\\n\\n", My::Lib::v(), "\\n";\n},
    0755
);
is $get->('/reg/y.pl'), 'lib one', 'a script that uses a library' for 1 .. 3;
write_file("$dir/lib/My/Lib.pm", qq{package My::Lib;\nsub v { "lib two, longer" }\n1;\n});
is $get->('/reg/y.pl'), 'lib two, longer', 'the library changed: seen on the same connection';

SKIP: {
    skip 'mounting needs root', 2
        unless $> == 0
        && system("mount -t tmpfs perennial-test $dir/releases/2/cgi 2>/dev/null") == 0;
    $both->('404', 'a filesystem mounted over its directory: 404');
    system('umount', "$dir/releases/2/cgi") == 0 or die "Can't unmount";
    $both->('five', 'and unmounted');
}

close $sock;
$srv->stop;
unlike $srv->error_log, qr/\[error\]/, 'no error logged';
done_testing;

# The length of a response with a Content-Length, head included
sub _whole ($out) {
    my ($head)   = $out  =~ m{\A(.*?\r\n\r\n)}s or return 1;
    my ($length) = $head =~ m{\r\nContent-Length: (\d+)}i;
    return length($head) + ($length // 0);
}
