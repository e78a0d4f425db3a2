use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir slurp start_server wait_until write_file);

# A request refused before it reaches a virtual host (a bad request line, a path above the
# root, a bad Host) is written in the logs of the host it came to, as Apache writes it: the one
# its Host names, else the address's first host. A Debian layout has logs in its hosts only; the
# main server's would hold these lines where nobody looks.
my $dir = scratch_dir();
write_file("$dir/one/index.html", "one\n");
write_file("$dir/two/index.html", "two\n");
system("chmod -R a+rX $dir && chmod a+rwx $dir") == 0 or die;
my $hosts = join '', map { <<"HOST" } qw(one two);
<VirtualHost *:\${REFUSED_PORT}>
    ServerName $_.test
    DocumentRoot $dir/$_
    CustomLog $dir/${_}_access.log common
    ErrorLog $dir/${_}_error.log
</VirtualHost>
HOST
my $srv = start_server(
    workers  => 1,
    port_env => 'REFUSED_PORT',
    conf     => "Listen 127.0.0.1:\${REFUSED_PORT}\n$hosts"
);
local $ENV{REFUSED_PORT};
my $ask = sub ($bytes) { raw_request($srv->port, $bytes) };
like $ask->("GET / HTTP/1.1\r\nHost: two.test\r\nConnection: close\r\n\r\n"), qr/\r\n\r\ntwo\n\z/,
    'two.test serves';
like $ask->("GET /../etc/passwd HTTP/1.1\r\nHost: two.test\r\nConnection: close\r\n\r\n"),
    qr{\AHTTP/1\.1 400 }, 'a path above the root: 400';
like $ask->("GARBAGE\r\n\r\n"), qr{\AHTTP/1\.[01] 400 }, 'a bad request line: 400';
ok wait_until(sub { -e "$dir/one_access.log" && slurp("$dir/one_access.log") =~ /GARBAGE/ },
    10, 'log'),
    'the bad line, with no Host, is in the first host\'s access log';
like slurp("$dir/two_access.log"), qr{"GET /\.\./etc/passwd HTTP/1\.1" 400 },
    'the path above the root in the access log of the host it named';
like slurp("$dir/two_error.log"), qr/\[warn\].*bad request.*climbs above the root/,
    '  and in its error log, at warn';
unlike slurp("$dir/one_access.log"), qr/passwd/,         'not in the other host\'s';
unlike $srv->access_log,             qr/passwd|GARBAGE/, 'nor in the main server\'s';

# A graceful restart to a configuration without hosts (one application): refusals are the main
# server's again
write_file("$dir/app.psgi", q{sub { [200, ['Content-Type' => 'text/plain'], ["app\n"]] }});
chmod 0644, "$dir/app.psgi";
write_file(
    $srv->conf,
    do { local (@ARGV, $/) = $srv->conf; <> }
        =~ s{<VirtualHost.*</VirtualHost>\n}{<Location />\n    SetHandler psgi\n    PSGIApp $dir/app.psgi\n</Location>\n}sr
);
my @old = $srv->pids;
$srv->signal('USR1');
$srv->wait_replaced(\@old, 1);
like $ask->("AFTER RESTART\r\n\r\n"), qr{\AHTTP/1\.[01] 400 },
    'after a restart without hosts, refused';
ok wait_until(sub { $srv->access_log =~ /AFTER RESTART/ }, 10, 'main log'),
    '  and written in the main server\'s access log';
unlike slurp("$dir/one_access.log"), qr/AFTER RESTART/, '  not in the old host\'s';
$srv->stop;
done_testing;
