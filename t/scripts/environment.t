use v5.36;
use Test::More;
use IO::Socket::IP;
use Socket ();
use Symbol ();
use Perennial::Executor::Environment;

# The CGI variables of a script request go into %ENV and the real environment the same way
# from the C sync_env and from its Perl twin, over a run of requests that change, drop and add
# variables: the same %ENV after each, what a child process sees is %ENV, and a variable that
# is not the server's is never touched. (t/scripts/modes.t and others see the variables from
# real scripts; t/http/pure_perl.t runs them on the Perl twin.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Environment::xs_sync_env;

my %SKIP   = (HTTP_PROXY => 1, HTTP_AUTHORIZATION => 1);
my @STATIC = (
    [qw(GATEWAY_INTERFACE SCRIPT_NAME PATH_INFO MINE)],
    ['CGI/1.1', '/s.pl', '', 'set by SetEnv']
);
my %BASE = (
    SERVER_NAME       => 'localhost',
    SERVER_PORT       => 80,
    SERVER_PROTOCOL   => 'HTTP/1.1',
    REQUEST_METHOD    => 'GET',
    REQUEST_URI       => '/s.pl?a=1',
    QUERY_STRING      => 'a=1',
    REMOTE_ADDR       => '127.0.0.1',
    REMOTE_PORT       => 40000,
    HTTP_HOST         => 'example.org:8080',
    HTTP_ACCEPT       => '*/*',
    HTTP_PROXY        => 'http://evil/',
    'psgi.url_scheme' => 'http',
    'psgi.input'      => \*STDIN,
);

# A connection over loopback, for a listener of every address: SERVER_ADDR is asked of it
my $listen = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)
    or die "listen: $@";
my $client = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $listen->sockport)
    or die "connect: $@";
my $conn = $listen->accept or die "accept: $!";
my %CONN = ('psgix.io' => $conn, REMOTE_ADDR => '127.0.0.1', REMOTE_PORT => $client->sockport);

# An IPv4 client on an IPv6 socket: its address is v4-mapped (::ffff:127.0.0.1), as on a
# listener of every address that takes both
my $listen6 = IO::Socket::IP->new(
    LocalHost => '::ffff:127.0.0.1',
    LocalPort => 0,
    Listen    => 1,
    Family    => Socket::AF_INET6(),
    V6Only    => 0
);
my $client6
    = $listen6 && IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $listen6->sockport);
my $conn6 = $client6 && $listen6->accept;
my %MAPPED
    = $conn6
    ? ('psgix.io' => $conn6, REMOTE_ADDR => '::ffff:127.0.0.1', REMOTE_PORT => $client6->sockport)
    : %CONN;

# Each step: a PSGI environment (or undef: the groups alone) and the groups
my @STEPS = (
    ['first request',    {%BASE},                       @STATIC],
    ['the same again',   {%BASE},                       @STATIC],
    ['a new connection', {%BASE, REMOTE_PORT => 40001}, @STATIC],
    [   'a POST over https, no query, a redirect',
        {   %BASE,
            REQUEST_METHOD    => 'POST',
            QUERY_STRING      => undef,
            CONTENT_LENGTH    => 5,
            CONTENT_TYPE      => 'text/plain',
            REMOTE_USER       => 'ann',
            AUTH_TYPE         => 'Basic',
            'psgi.url_scheme' => 'https',
            REDIRECT_STATUS   => 404,
            REDIRECT_         => 'not a variable',
            HTTP_             => 'not a header',
        },
        @STATIC
    ],
    ['a header less, a header more', {%BASE, HTTP_ACCEPT => undef, HTTP_X_NEW => 'x'},    @STATIC],
    ['an empty body, IPv6 host', {%BASE, CONTENT_LENGTH => 0, HTTP_HOST => '[::1]:8080'}, @STATIC],
    ['no Host',                         {%BASE, HTTP_HOST => undef}, @STATIC],
    ['a CGI variable wins over SetEnv', {%BASE}, [qw(SERVER_NAME MINE)], ['from SetEnv', 'again']],
    ['undefined values are empty',      {%BASE, REQUEST_URI => undef}, [qw(MINE)],      [undef]],
    ['groups alone (PerlSetupEnv Off)', undef,                         [qw(PERL_ONLY)], ['1']],
    ['nothing (a clean %ENV)',          undef],
    ['and back',                        {%BASE},                                  @STATIC],
    ['a listener of one address',       {%BASE, SERVER_NAME => '127.0.0.1'},      @STATIC],
    ['a listener of every address',     {%BASE, %CONN, SERVER_NAME => '0.0.0.0'}, @STATIC],
    ['the same connection again',       {%BASE, %CONN, SERVER_NAME => '0.0.0.0'}, @STATIC],
    ['a Unix socket', {%BASE, SERVER_NAME => '/run/site.sock', SERVER_PORT => 0}, @STATIC],
    [   'https, no port in Host (behind a proxy)',
        {%BASE, HTTP_HOST => 'example.org', 'psgi.url_scheme' => 'https'}, @STATIC
    ],
    ['no Host on an IPv6 listener', {%BASE, HTTP_HOST => undef, SERVER_NAME => '::1'}, @STATIC],
    ['a v4-mapped address', {%BASE, %MAPPED, SERVER_NAME => '::'}, @STATIC],
    [   'no handle, an address asked for',
        {%BASE, SERVER_NAME => '0.0.0.0', 'psgix.io' => 'not a handle', REMOTE_PORT => 1}, @STATIC
    ],
    ['a handle emptied', {%BASE, SERVER_NAME => '::', 'psgix.io' => Symbol::gensym()}, @STATIC],
    ['no peer known',    {%BASE, %CONN, SERVER_NAME => '0.0.0.0', REMOTE_ADDR => undef}, @STATIC],
    [   'a ServerName with a port',
        {%BASE, HTTP_HOST => 'Example.ORG', 'perennial.server_port' => 8081}, @STATIC
    ],
    [   'no Host, a ServerName',
        {%BASE, HTTP_HOST => undef, 'perennial.server_name' => 'www.example.org'}, @STATIC
    ],
);

sub snapshot () {
    return {map { $_ => $ENV{$_} } grep { $_ ne 'PERENNIAL_TEST_OWN' } keys %ENV};
}

# What a child process sees, as name => value
sub child_sees () {
    open(my $kid, '-|', $^X, '-e', 'print map {"$_=$ENV{$_}\0"} keys %ENV') or die "fork: $!";
    local $/;
    my %seen = map { split /=/, $_, 2 } split /\0/, <$kid> // '';
    close $kid;
    delete $seen{PERENNIAL_TEST_OWN};
    $seen{$_} //= '' for keys %seen;
    return \%seen;
}

my %after;
for my $impl ('xs', 'pp') {
    my $sync  = \&{"Perennial::Executor::Environment::${impl}_sync_env"};
    my %state = (names => '');
    local %ENV = (PATH => $ENV{PATH} // '/usr/bin:/bin', PERENNIAL_TEST_OWN => 'kept');
    for my $step (@STEPS) {
        my ($name, $env, @groups) = @$step;
        my $input = $env && {map { defined $env->{$_} ? ($_ => $env->{$_}) : () } keys %$env};
        $sync->(\%state, $input, \%SKIP, @groups);
        push @{$after{$impl}}, snapshot();
        is $ENV{PERENNIAL_TEST_OWN}, 'kept', "$impl, $name: a variable not the server's stays";
        is_deeply child_sees(), snapshot(), "$impl, $name: a child process sees %ENV"
            unless $impl eq 'pp' && $name ne 'first request';
    }
}
for my $i (0 .. $#STEPS) {
    is_deeply $after{xs}[$i], $after{pp}[$i], "C and Perl agree after: $STEPS[$i][0]";
}

# What the variables are, step by step (either implementation: they agree)
my @seen = @{$after{xs}};
is_deeply [@{$seen[0]}{qw(SERVER_NAME SERVER_PORT QUERY_STRING REMOTE_PORT HTTP_HOST MINE)}],
    ['example.org', 8080, 'a=1', 40000, 'example.org:8080', 'set by SetEnv'],
    'the request, its headers and the groups (SERVER_PORT: the one Host names, as Apache)';
ok !exists $seen[0]{HTTP_PROXY},     'a skipped header is not exported';
ok !exists $seen[0]{'psgi.input'},   'nor is a PSGI key';
ok !exists $seen[0]{CONTENT_LENGTH}, 'no body, no CONTENT_LENGTH';
is $seen[0]{REQUEST_SCHEME}, 'http', 'REQUEST_SCHEME';
ok !exists $seen[0]{SERVER_ADDR}, 'no SERVER_ADDR where the listener has no address';
is $seen[2]{REMOTE_PORT}, 40001, 'a new connection: its port';
is_deeply [@{$seen[3]}{qw(QUERY_STRING HTTPS CONTENT_LENGTH CONTENT_TYPE REMOTE_USER AUTH_TYPE)}],
    ['', 'on', 5, 'text/plain', 'ann', 'Basic'], 'a POST over https by a user';
is $seen[3]{REQUEST_SCHEME},  'https', 'its REQUEST_SCHEME';
is $seen[3]{REDIRECT_STATUS}, 404,     'REDIRECT_ variables';
ok !exists $seen[3]{REDIRECT_} && !exists $seen[3]{HTTP_}, 'but no bare prefixes';
ok !exists $seen[4]{$_}, "$_ gone on the next request"
    for qw(HTTPS CONTENT_LENGTH CONTENT_TYPE REMOTE_USER AUTH_TYPE REDIRECT_STATUS HTTP_ACCEPT);
is $seen[4]{HTTP_X_NEW}, 'x', 'a new header';
ok !exists $seen[5]{CONTENT_LENGTH}, 'Content-Length 0: no CONTENT_LENGTH, as mod_cgi';
is $seen[5]{SERVER_NAME}, '[::1]',       'an IPv6 host keeps its brackets';
is $seen[6]{SERVER_NAME}, 'localhost',   'no Host: the server name';
is $seen[6]{SERVER_PORT}, 80,            "and the scheme's port, as Apache";
is $seen[5]{SERVER_PORT}, 8080,          "an IPv6 Host's port";
is $seen[3]{SERVER_PORT}, 8080,          'https with a port in Host: that port';
is $seen[7]{MINE},        'again',       'a group later in the list wins';
is $seen[7]{SERVER_NAME}, 'example.org', 'and the request comes after the groups';
is $seen[8]{REQUEST_URI}, '',            'an undefined value is empty';
is_deeply [sort grep { $_ ne 'PATH' } keys %{$seen[9]}], ['PERL_ONLY'],
    'groups alone: nothing of the earlier requests stays';
is_deeply [sort grep { $_ ne 'PATH' } keys %{$seen[10]}], [],       'nothing: a clean %ENV';
is_deeply $seen[11],                                      $seen[0], 'and back as at first';
is $seen[12]{SERVER_ADDR}, '127.0.0.1', "SERVER_ADDR: the listener's address";
is $seen[13]{SERVER_ADDR}, '127.0.0.1', 'on a listener of every address, the connection\'s';
is $seen[14]{SERVER_ADDR}, '127.0.0.1', 'the same on its next request';
ok !exists $seen[15]{SERVER_ADDR}, 'none on a Unix socket';
is $seen[16]{SERVER_PORT}, 443, "https and a Host without a port: the scheme's port";
is_deeply [@{$seen[17]}{qw(SERVER_NAME SERVER_PORT)}], ['::1', 80],
    "no Host: the listener's address whole, and the scheme's port";
is $seen[18]{SERVER_ADDR}, '127.0.0.1', 'a v4-mapped address as its IPv4 one, as Apache'
    if $conn6;
ok !exists $seen[19]{SERVER_ADDR} && !exists $seen[20]{SERVER_ADDR},
    'no SERVER_ADDR, and no death, where psgix.io is no open handle';
is $seen[21]{SERVER_ADDR}, '127.0.0.1', 'nor without the peer known';
is_deeply [@{$seen[22]}{qw(SERVER_NAME SERVER_PORT)}], ['example.org', 8081],
    "Host's name in lower case, and ServerName's port where Host names none";
is $seen[23]{SERVER_NAME}, 'www.example.org', 'no Host: ServerName, where it is set';
is $seen[0]{SERVER_PORT} . ' ' . $BASE{SERVER_PORT}, '8080 80', "not the listener's";

# mod_perl's subprocess_env in void context adds variables that the next request removes
{
    local %ENV = (PATH => $ENV{PATH} // '/usr/bin:/bin');
    Perennial::Executor::Environment->apply([[[qw(A)], [1]]]);
    Perennial::Executor::Environment->add(['ADDED'], ['late']);
    is $ENV{ADDED}, 'late', 'a variable added during a request';
    Perennial::Executor::Environment->apply([[[qw(A)], [1]]]);
    ok !exists $ENV{ADDED}, 'goes with the next request';
    is $ENV{A}, 1, 'which keeps its own';
}

eval { Perennial::Executor::Environment::xs_sync_env({}, undef, undef, ['A']) };
like $@, qr/names without values/, 'C: a name list without values is refused';
eval { Perennial::Executor::Environment::xs_sync_env([], undef, undef) };
like $@, qr/not a hash reference/, 'C: so is a state that is not a hash';

done_testing;
