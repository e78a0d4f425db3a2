use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(getcwd);
use File::Temp      qw(tempdir);
use IO::Socket::SSL qw(SSL_VERIFY_NONE);
use Perennial::Test qw(configtest nginx_conf slurp start_program start_server write_file);

# TLS is terminated in front of Perennial, by the nginx configuration shipped in
# examples/nginx/perennial-tls.conf, run here as it is (its port, certificate and upstream
# changed): HTTPS with two requests on one kept-alive TLS connection, the application seeing
# https and the client's address. Perennial refuses the directives that would have it do TLS
# itself, saying where the front's configuration is.

plan skip_all => 'nginx is not installed' unless -x '/usr/sbin/nginx';
my $root = getcwd();
my $dir  = tempdir(CLEANUP => 1);
chmod 0755, $dir;
system(
    'openssl', 'req',           '-x509',     '-newkey',       'rsa:2048', '-nodes',
    '-days',   '1',             '-subj',     '/CN=localhost', '-keyout',  "$dir/key.pem",
    '-out',    "$dir/cert.pem", '-loglevel', 'error'
    ) == 0
    or system(
    'openssl', 'req',          '-x509', '-newkey', 'rsa:2048',
    '-nodes',  '-days',        '1',     '-subj',   '/CN=localhost',
    '-keyout', "$dir/key.pem", '-out',  "$dir/cert.pem"
    ) == 0
    or BAIL_OUT('openssl could not make a certificate');

my $srv = start_server(
    workers => 2,
    app     => 'scheme.psgi',
    conf    => "RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n"
);

my $site = slurp("$root/examples/nginx/perennial-tls.conf");
my %swap = (
    'listen 443 ssl http2;'  => 'listen 127.0.0.1:PORT ssl http2;',
    'server 127.0.0.1:8080;' => 'server 127.0.0.1:' . $srv->port . ';',
    'ssl_certificate     /etc/ssl/certs/ssl-cert-snakeoil.pem;' => "ssl_certificate $dir/cert.pem;",
    'ssl_certificate_key /etc/ssl/private/ssl-cert-snakeoil.key;' =>
        "ssl_certificate_key $dir/key.pem;",
);

for my $from (sort keys %swap) {
    is scalar(() = $site =~ /\Q$from\E/g), 1, "the shipped file has '$from'";
    $site =~ s/\Q$from\E/$swap{$from}/;
}
my ($pid, $port) = start_program(
    sub ($port) {
        write_file("$dir/site.conf", $site =~ s/PORT/$port/r);
        nginx_conf($dir, "    include $dir/site.conf;");
        return ('/usr/sbin/nginx', '-c', "$dir/nginx.conf", '-p', $dir);
    },
    sub ($port) {
        IO::Socket::SSL->new(
            PeerHost        => '127.0.0.1',
            PeerPort        => $port,
            SSL_verify_mode => SSL_VERIFY_NONE
        );
    },
    "$dir/nginx.out"
);
ok $pid, 'nginx serves the shipped configuration' or diag slurp("$dir/nginx-error.log");

my $tls = IO::Socket::SSL->new(
    PeerHost        => '127.0.0.1',
    PeerPort        => $port,
    SSL_verify_mode => SSL_VERIFY_NONE,
    Timeout         => 10
) or BAIL_OUT("no TLS connection: $IO::Socket::SSL::SSL_ERROR");
for my $n (1, 2) {
    print {$tls}
        "GET /$n HTTP/1.1\r\nHost: www.example.org\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n";
    my ($head, $body) = _response($tls);
    like $head, qr{\AHTTP/1\.1 200 }, "request $n over one TLS connection";
    is $body, "https 203.0.113.9\n", 'the application sees https and the client\'s address';
}
close $tls;
kill 'QUIT', $pid;
waitpid $pid, 0;

my ($out, $code) = configtest("Listen 127.0.0.1:8443 https\n", 'tls.conf');
isnt $code, 0, 'Listen ... https: refused';
like $out,
    qr{tls\.conf line 1: Listen 127\.0\.0\.1:8443 https: Perennial does not terminate TLS: put nginx in front of it \(a tested configuration: examples/nginx/perennial-tls\.conf},
    'with the file, the line and where the front\'s configuration is';
($out, $code) = configtest("Listen 8080\nSSLEngine on\n", 'tls.conf');
like $out, qr/tls\.conf line 2: SSLEngine: Perennial does not terminate TLS/,
    'mod_ssl\'s directives too';
($out, $code) = configtest("Listen 8080 http\nDocumentRoot /tmp\n", 'plain.conf');
is $code, 0, 'Listen ... http is Apache\'s plain Listen' or diag $out;

done_testing;

# A response's head and its Content-Length body
sub _response ($sock) {
    my $head = '';
    while (defined(my $line = <$sock>)) { $head .= $line; last if $line eq "\r\n" }
    my ($length) = $head =~ /^Content-Length:\s*(\d+)/mi;
    read($sock, my $body, $length // 0);
    return ($head, $body);
}
