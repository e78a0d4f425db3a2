use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(raw_request scratch_dir start_server write_file);
use Perennial::Test::Scripts qw(start_script_server);

# The Content-Length line of a response is the server's. A length an application or a script
# gives that does not match its body would end the response early, or send bytes a kept-alive
# client reads as the next response (a proxy in front, as another client's): a whole body known
# to the server is sent with its own length; a streamed one is cut at the length its head
# says, and its connection ends after it when it had more or fewer. Each case is asked twice
# on one connection: the second answer must be a response of its own.
my $dir = scratch_dir();
write_file("$dir/app.psgi", <<'PSGI');
my %case = (
    short   => [200, ['Content-Type' => 'text/plain', 'Content-Length' => 3],  ["abcdefghij\n"]],
    long    => [200, ['Content-Type' => 'text/plain', 'Content-Length' => 30], ["short\n"]],
    word    => [200, ['Content-Type' => 'text/plain', 'Content-Length' => 'abc'], ["body\n"]],
    two     => [200, ['Content-Length' => 5, 'Content-Type' => 'text/plain', 'Content-Length' => 7],
        ["two!\n"]],
    right   => [200, ['Content-Type' => 'text/plain', 'Content-Length' => 5], ["right"]],
);
sub {
    my ($env) = @_;
    my $q = $env->{QUERY_STRING};
    return $case{$q} if $case{$q};
    return [200, ['Content-Type' => 'text/plain', 'Content-Length' => 9], []] if $q eq 'head';
    return [204, ['Content-Length' => 5], []] if $q eq 'none';
    return [304, ['Content-Length' => 5], []] if $q eq 'same';
    return sub {    # Streamed: more, or fewer, bytes than the length it gives
        my $w = shift->([200, ['Content-Type' => 'text/plain', 'Content-Length' => 4]]);
        $w->write($q eq 'more' ? "1234" : "12");
        $w->write("5678\n") if $q eq 'more';
        $w->close;
    };
}
PSGI
my $srv = start_server(workers => 1, args => ["$dir/app.psgi"]);

# Two requests on one connection: each response as the client reads it by its framing
sub twice ($port, $target, $method = 'GET') {
    my $req = "$method $target HTTP/1.1\r\nHost: x\r\n\r\n";
    my $out = raw_request($port, $req . $req =~ s/\r\n\r\n\z/\r\nConnection: close\r\n\r\n/r);
    my @res;
    while ($out =~ s/\A(HTTP\/1\.1 (\d+)[^\r]*\r\n(.*?)\r\n\r\n)//s) {
        my ($status, $head) = ($2, $3);
        my @lengths = $head =~ /^Content-Length: (.*?)\r?$/mgi;
        my $length  = $method eq 'HEAD' ? 0 : $lengths[0] // length $out;
        push @res, {status => $status, lengths => \@lengths, body => substr($out, 0, $length, '')};
    }
    return (\@res, $out);
}

my %want = (
    short => "abcdefghij\n",
    long  => "short\n",
    word  => "body\n",
    two   => "two!\n",
    right => 'right'
);
for my $case (sort keys %want) {
    my ($res, $rest) = twice($srv->port, "/?$case");
    is scalar @$res, 2, "$case: two responses on the connection";
    is_deeply [map { $_->{body} } @$res], [($want{$case}) x 2], "$case: each with its whole body";
    is_deeply [map { scalar @{$_->{lengths}} } @$res], [1, 1],  "$case: one Content-Length each";
    is $rest, '', "$case: nothing after them";
}
my ($res) = twice($srv->port, '/?head', 'HEAD');
is_deeply [map { $_->{lengths} } @$res], [[9], [9]],
    'HEAD with an empty body: the application\'s length, that of the GET\'s body';

($res) = twice($srv->port, '/?none', 'HEAD');
is_deeply [map { $_->{lengths} } @$res], [[], []], 'a 204 has no Content-Length (RFC 9110 8.6)';
($res) = twice($srv->port, '/?same', 'HEAD');
is_deeply [map { $_->{lengths} } @$res], [[], []], 'nor a 304, as Apache drops a script\'s there';

for my $case (qw(more less)) {
    my ($res, $rest) = twice($srv->port, "/?$case");
    is scalar @$res,    1, "streamed, $case bytes than its length: its connection ends after it";
    is $res->[0]{body}, $case eq 'more' ? '1234' : '12', '  with no byte past the length';
    is $rest,           '', '  and nothing the client would read as a next response';
}
like $srv->get('/?right')->{content}, qr/\Aright\z/, 'the worker serves on';
$srv->stop;

# A script's own Content-Length, under Registry (its whole output known) and mod_cgi (streamed
# from its process)
my $scripts = scratch_dir();
write_file("$scripts/short.pl",
    qq{#!$^X\nprint "Content-Type: text/plain\\nContent-Length: 3\\n\\nabcdefghij\\n";\n}, 0755);
system("chmod -R a+rX $scripts") == 0 or die;
my $site = start_script_server(dir => $scripts);
($res, my $rest) = twice($site->port, '/registry/short.pl');
is_deeply [map { [$_->{lengths}, $_->{body}] } @$res], [([[11], "abcdefghij\n"]) x 2],
    'Registry: the script\'s whole output, with its own length, twice';
($res, $rest) = twice($site->port, '/cgi-bin/short.pl');
is_deeply [map { $_->{body} } @$res], ['abc'], 'mod_cgi: cut at the length it gave, then closed';
is $rest, '', '  and nothing after it';
$site->stop;
done_testing;
