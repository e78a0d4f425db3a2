use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(raw_request scratch_dir start_server write_file);

# An application's header with a line break in its name or value cannot start a header, or a
# body, of a client's choosing: the break becomes a space
my $dir = scratch_dir();
write_file("$dir/app.psgi", <<'PSGI');
sub {
    my ($env) = @_;
    my $q = $env->{QUERY_STRING};
    return [200, ['Content-Type' => 'text/plain', 'X-Echo' => "a\r\nX-Evil: 1", "X-N\nInjected" => 'v',
        'Content-Length' => 3], ["ok\n"]] if $q eq 'bad';
    return [200, ['Content-Type' => 'text/plain', 'X-Fine' => 'yes'], ["ok\n"]];
}
PSGI
my $srv    = start_server(workers => 1, args => ["$dir/app.psgi"]);
my $out    = raw_request($srv->port, "GET /?bad HTTP/1.0\r\n\r\n");
my ($head) = split /\r\n\r\n/, $out, 2;
unlike $head, qr/^X-Evil:/m,                  'a CRLF in a value starts no header';
like $head,   qr/^X-Echo: a  X-Evil: 1\r?$/m, '  it is written as spaces';
like $head,   qr/^X-N Injected: v\r?$/m,      'a line feed in a name too';
like $out,    qr/\r\n\r\nok\n\z/,             'and the body is the application\'s';
$out = raw_request($srv->port, "GET /?good HTTP/1.0\r\n\r\n");
like $out, qr/^X-Fine: yes\r$/m, 'a plain header as it was';
$srv->stop;
done_testing;
