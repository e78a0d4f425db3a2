use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test
    qw(nginx_conf raw_request scratch_dir slurp start_program start_server wait_until write_file);

# Behind a real nginx: the client's address comes from X-Forwarded-For only when the
# connection is from the trusted proxy; access rules, the log and scripts see the client
my $nginx = -x '/usr/sbin/nginx' ? '/usr/sbin/nginx' : undef
    or plan skip_all => 'nginx is not installed (make test installs it)';
my $dir = scratch_dir();
mkdir "$dir/cgi" or die $!;
write_file("$dir/cgi/addr.pl", <<'PL', 0755);
#!/usr/bin/perl
print "Content-Type: text/plain\n\n$ENV{REMOTE_ADDR} ", ($ENV{HTTPS} // 'off'), "\n";
PL
my $srv = start_server(workers => 1, conf => <<"CONF");
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
LogFormat "%a %h %U %{c}a" addr
CustomLog $dir/addr.log addr
ScriptAlias /cgi/ $dir/cgi/
<Location /cgi>
    Require ip 127.0.0.2 127.0.0.1
</Location>
<Location /cgi/addr.pl/only-two>
    Require ip 127.0.0.2
</Location>
CONF
my $backend = $srv->port;

# nginx on a port of its own, with its own configuration and files, in the foreground
my ($pid, $port) = start_program(
    sub ($port) {
        nginx_conf($dir, <<"NGINX");
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://127.0.0.1:$backend;
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto https;
        }
    }
NGINX
        return ($nginx, '-c', "$dir/nginx.conf", '-p', $dir);
    },
    sub ($port) { IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) },
    "$dir/nginx.out"
) or BAIL_OUT('nginx did not start');

sub through ($port, $path, $from, $xff = undef) {
    my $head = defined $xff ? "X-Forwarded-For: $xff\r\n" : '';
    my $out  = raw_request($port, "GET $path HTTP/1.0\r\nHost: h.test\r\n$head\r\n", from => $from);
    my ($s)    = $out =~ m{\AHTTP/1\.\d (\d+)};
    my ($body) = $out =~ /\r\n\r\n(.*)\z/s;
    return "$s " . ($body // '');
}

is through($port, '/cgi/addr.pl', '127.0.0.2'), "200 127.0.0.2 on\n",
    'through nginx: the client\'s address and https, from the trusted proxy';
is through($port, '/cgi/addr.pl/only-two', '127.0.0.2'), "200 127.0.0.2 on\n",
    'Require ip sees the client';
like through($port, '/cgi/addr.pl/only-two', '127.0.0.3'), qr/\A403 /, 'and refuses another one';
is through($port, '/cgi/addr.pl', '127.0.0.2', '10.9.9.9'), "200 127.0.0.2 on\n",
    'what the client wrote in X-Forwarded-For before nginx is not believed';
is through($backend, '/cgi/addr.pl', '127.0.0.2', '127.0.0.1, 10.1.1.1'), "200 127.0.0.2 off\n",
    'straight to Perennial from an untrusted address: the header is ignored';
ok wait_until(sub { slurp("$dir/addr.log") =~ tr/\n// >= 5 }, 5, 'log lines'), 'logged';
like slurp("$dir/addr.log"), qr{^127\.0\.0\.2 127\.0\.0\.2 /cgi/addr\.pl 127\.0\.0\.1$}m,
    '%a and %h are the client, %{c}a the peer';
unlike slurp("$dir/addr.log"), qr{^127\.0\.0\.1 }m, 'never the proxy';
kill 'QUIT', $pid;
$srv->stop;

subtest 'a proxy that is not an address is refused with its line' => sub {
    my ($out)
        = Perennial::Test::configtest(
        "RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 10.0.0.1 nowhere\n", 'proxy.conf');
    like $out,
        qr/proxy\.conf line 2: RemoteIPInternalProxy: 'nowhere' is not an address or network/,
        'file, line and the address';
};

done_testing;
