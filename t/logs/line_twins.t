use v5.36;
use utf8;
use Test::More;
use Perennial::Log::Format;

# An access log's line made in C (xs/Format.xs) is the line its Perl twin makes, for every
# directive, over requests with values missing, empty, escaped, in UTF-8 and wide

plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Log::Format::xs_line;

my @formats = (
    (   map {"\%{$_}n $Perennial::Log::Format::NICKNAMES{$_}"}
        sort keys %Perennial::Log::Format::NICKNAMES
    ),
    '%a %{c}a %h %{c}h %A %B %b %D %{FOO}e %f %H %{X-Test}i %I %k %l %m %{Content-Type}o %O %p '
        . '%{remote}p %P %q %r %R %s %>s %T %{ms}T %{us}T %u %U %v %V %X %% \\"text\\"\\t',
    '%400,501{User-Agent}i %!200{Referer}i %<s',
    '',
    'no directive at all',
);
my %full = (
    REMOTE_ADDR       => '10.0.0.1',
    REMOTE_PORT       => 40000,
    'perennial.peer'  => '127.0.0.1',
    REQUEST_METHOD    => 'GET',
    REQUEST_URI       => '/a/b?x=1',
    QUERY_STRING      => 'x=1',
    SERVER_PROTOCOL   => 'HTTP/1.1',
    SERVER_NAME       => 'example.test',
    SERVER_PORT       => 8529,
    SCRIPT_FILENAME   => '/srv/x.pl',
    REMOTE_USER       => 'al"ice',
    HTTP_HOST         => 'example.test:8529',
    HTTP_REFERER      => "http://r/\x01\x7f\\",
    HTTP_USER_AGENT   => 'UA/1 "quoted"',
    HTTP_X_TEST       => "bytes \x80\xff\x00",
    FOO               => 'from env',
    'perennial.line'  => 'GET /a/b?x=1 HTTP/1.1',
    'perennial.vhost' => 'vhost.test',
);
my @requests = (
    [   'every value',
        {   env        => \%full,
            status     => 200,
            bytes      => 1234,
            micros     => 153,
            headers    => ['Content-Type', 'text/plain', 'content-type', 'x'],
            head_bytes => 90,
            keep_alive => 1,
            vhost      => 'vhost.test'
        }
    ],
    ['nothing but the status', {env => {}, status => 404, bytes => 0, micros => 0}],
    [   'no request line kept: made from its parts',
        {env => {%full, 'perennial.line' => undef}, status => 400, bytes => undef, micros => 7}
    ],
    [   'no request line kept: its parts escaped, wide and not',
        {   env => {
                %full,
                'perennial.line' => undef,
                REQUEST_URI      => "/☺/\x01\"q\\",
                REQUEST_METHOD   => "G\x{e9}T",
                SERVER_PROTOCOL  => "HTTP/1.0\xff"
            },
            status => 200,
            bytes  => 1,
            micros => 1
        }
    ],
    [   'no request line kept, and no method',
        {env => {%full, 'perennial.line' => undef, REQUEST_METHOD => undef}, status => 400}
    ],
    [   'UTF-8, wide and not',
        {   env => {
                %full,
                HTTP_USER_AGENT  => "café ☺",
                HTTP_REFERER     => "caf\x{e9}",
                REMOTE_USER      => "Zoë",
                'perennial.line' => "GET /☺ HTTP/1.1"
            },
            status => 200,
            bytes  => '5',
            micros => 1
        }
    ],
    ['no environment at all', {status => 500, bytes => 10, micros => 2}],
);

local $SIG{__WARN__} = sub { };    # The Perl twin's warnings about missing values
for my $format (@formats) {
    my $f = Perennial::Log::Format->compile($format);
    for my $case (@requests) {
        my ($name, $r) = @$case;
        my ($c, $p);
        for (1 .. 3) {    # %t: the same second for both
            ($c, $p)
                = (Perennial::Log::Format::xs_line($f, $r),
                Perennial::Log::Format::pp_line($f, $r));
            last if $c eq $p;
        }
        is $c, $p, "'$format': $name";
    }
}

subtest 'the time, as Apache writes it' => sub {
    my $line = Perennial::Log::Format::xs_line(Perennial::Log::Format->compile('%t'), {env => {}});
    like $line, qr{\A\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [-+]\d{4}\]\n\z}, $line;
};

subtest 'what is not a format or a request is refused' => sub {
    ok !eval { Perennial::Log::Format::xs_line({}, {}); 1 }, 'a hash without pieces';
    ok !eval { Perennial::Log::Format::xs_line(Perennial::Log::Format->compile('%h'), []); 1 },
        'a request that is not a hash';
};

done_testing;
