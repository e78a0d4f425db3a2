use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(raw_request scratch_dir start_server write_file);
use Perennial::Test::Apache qw(apache_available apache_head site_files start_apache);

# A virtual host's SERVER_PORT when Host names no port, and its SERVER_NAME without Host, as
# Apache's server_rec gives them: the host's own ServerName's port, none (the scheme's) when
# its ServerName names none, not the main server's; and REDIRECT_URL after a local redirect is
# the path decoded and merged (Apache's r->uri), not as sent. Compared with Apache's for the
# same requests, on both builds.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
site_files(
    $dir,
    'cgi-bin/env.pl' => "print \"Content-Type: text/plain\\n\\n\";\n"
        . "print \"\$_=\", \$ENV{\$_} // '(unset)', \"\\n\" for qw(SERVER_NAME SERVER_PORT REDIRECT_URL);\n",
    'cgi-bin/from.pl' => "print \"Location: /cgi-bin/env.pl\\n\\n\";\n",
);
my $conf = <<"CONF";
ScriptAlias /cgi-bin/ $dir/cgi-bin/
<Directory $dir>
    Require all granted
</Directory>
<VirtualHost *>
    ServerName v.example
</VirtualHost>
<VirtualHost *>
    ServerName w.example:8090
</VirtualHost>
CONF
my $head = apache_head($dir, 'VP_PORT', qw(authz_core alias cgi mime))
    =~ s/^ServerName .*$/ServerName localhost:8081/mr;
write_file("$dir/apache.conf", $head . $conf);
my ($apid, $aport) = start_apache("$dir/apache.conf", 'VP_PORT', SITE_RUN => scratch_dir())
    or BAIL_OUT('Apache did not start');

my @asked = (
    ['/cgi-bin/env.pl',         'v.example'],
    ['/cgi-bin/env.pl',         'w.example'],
    ['/cgi-bin/env.pl',         'W.EXAMPLE.'],
    ['/cgi-bin/env.pl',         'other.example'],
    ['/cgi-bin/./x/../from.pl', 'v.example'],
    ['/cgi-bin//fr%6fm.pl',     'v.example'],
);

sub answer ($port, $path, $host) {
    my $raw = raw_request($port, "GET $path HTTP/1.0\r\nHost: $host\r\n\r\n");
    return ($raw =~ /\r\n\r\n(.*)\z/s)[0] // $raw;
}
my @want = map { answer($aport, @$_) } @asked;
like $want[0], qr/^SERVER_PORT=80$/m,   "Apache: a host whose ServerName names no port, 80";
like $want[1], qr/^SERVER_PORT=8090$/m, "Apache: one whose ServerName names 8090, 8090";
like $want[4], qr{^REDIRECT_URL=/cgi-bin/from\.pl$}m, "Apache: REDIRECT_URL is the path merged";

for my $build (qw(C Perl)) {
    local $ENV{PERENNIAL_PURE_PERL} = $build eq 'Perl' ? 1 : undef;
    my $srv = start_server(workers => 1, conf => "ServerName localhost:8081\n$conf");
    is answer($srv->{port}, @{$asked[$_]}), $want[$_],
        "$build build: GET $asked[$_][0], Host $asked[$_][1]"
        for 0 .. $#asked;
    $srv->stop;
}
kill 'TERM', $apid;
waitpid $apid, 0;

done_testing;
