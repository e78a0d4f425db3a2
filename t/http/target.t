use v5.36;
use Test::More;
use Perennial::HTTP::Request qw(parse_head without_dot_segments);

# The request target's path, decoded and without dot segments (RFC 3986 5.2.4), as Apache
# gives it to what maps it: a table of paths and what they become (undef: 400, above the root)
my @table = (
    ['/a/./b/../c',   '/a/c'],
    ['/a/b/..',       '/a/'],
    ['/a/b/.',        '/a/b/'],
    ['/.',            '/'],
    ['/a/b/../../',   '/'],
    ['//x/../y',      '//y'],
    ['/a/.b/..c/...', '/a/.b/..c/...'],
    ['/..',           undef],
    ['/a/../../b',    undef],
    ['/plain/path',   '/plain/path'],
);
is without_dot_segments($_->[0]), $_->[1],      "$_->[0] -> " . ($_->[1] // 'refused') for @table;
is without_dot_segments('/a/../../b', 1), '/b', 'an internal redirect\'s path stops at the root';

# Through parse_head, with the encoded forms decoded first; REQUEST_URI stays as written
my $limits = {line => 8190, fields => 100, field_size => 8190};
for my $case (
    ['/x/%2e/y/%2E%2e/z?q=/../', '/x/z',              1],
    ['/%2e%2e/etc/passwd',       undef,               0],
    ['/caf%C3%A9/./menu',        "/caf\xc3\xa9/menu", 1],
    ['/a/%ff/../b',              '/a/b',              1],
    ['/a/%ff%fe/c',              "/a/\xff\xfe/c",     1],    # Not UTF-8: bytes as they are
    ['/a%2Fb/../c',              '/a/c',              1],    # Decoded; Dispatch refuses it
    ['//a//b/',                  '//a//b/',           1],    # Empty segments stay
    ['/a/b/.',                   '/a/b/',             1],
    ['/a/b/%2e%2e',              '/a/',               1],
    ['/a/.../b',                 '/a/.../b',          1],
    ['/a/x%00y/../z',            '/a/z',              1],
    ['/x%00y',                   '/x%00y',            1],    # A NUL stays encoded
    ['/a/%2e%2e/%2e%2e/b',       undef,               0],
    ['/.%2e/x',                  undef,               0],
    )
{
    my ($target, $path, $ok) = @$case;
    my $buf = "GET $target HTTP/1.1\r\nHost: x\r\n\r\n";
    my %env;
    my $len = parse_head(\$buf, \%env, $limits);

    if ($ok) {
        is $env{PATH_INFO},   $path,   "$target: PATH_INFO $path";
        is $env{REQUEST_URI}, $target, '  REQUEST_URI as written';
    }
    else {
        is $len, -400, "$target: 400";
        like $env{'perennial.refused'}, qr/above the root/, '  with the reason';
    }
}

# An absolute URL (RFC 9112 3.2.2): its path, and its host in place of the Host header
for my $case (
    ['http://h.test/a/./b?q',  '/a/b', 'h.test'],
    ['HTTP://H.test:81',       '/',    'H.test:81'],
    ['https://h.test/%2e%2e/', undef,  undef],
    ['http://u@h.test/',       undef,  undef],
    ['http:///nohost',         undef,  undef],
    )
{
    my ($target, $path, $host) = @$case;
    my $buf = "GET $target HTTP/1.1\r\nHost: x\r\n\r\n";
    my %env;
    my $len = parse_head(\$buf, \%env, $limits);
    if (defined $path) {
        is "$env{PATH_INFO} $env{HTTP_HOST}", "$path $host", "$target: PATH_INFO $path, Host $host";
    }
    else { is $len, -400, "$target: 400 ($env{'perennial.refused'})" }
}
done_testing;
