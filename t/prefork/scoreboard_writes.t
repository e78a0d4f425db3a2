use v5.36;
use Test::More;
use File::Temp ();
use Perennial::Scoreboard;

# A request's two scoreboard writes leave the same bytes from C as from their Perl twins: every
# field of the slot (numbers at their limits, a client and a request line cut to their fields,
# shorter ones padded), and nothing of the slots beside it. The slot reads back as written; the
# state letter likewise; a map attached to be read is not written.
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Scoreboard::xs_request_start;

# Each case: the request's environment, when it began, how many went before it on its
# connection, its bytes and microseconds
my @CASES = (
    [   {   REMOTE_ADDR     => '127.0.0.1',
            REQUEST_METHOD  => 'GET',
            REQUEST_URI     => '/',
            SERVER_PROTOCOL => 'HTTP/1.1'
        },
        1_700_000_000.25,
        0, 15, 100
    ],
    [   {   REMOTE_ADDR     => '2001:db8::1' x 6,
            REQUEST_METHOD  => 'GET',
            REQUEST_URI     => '/' . ('x' x 300),
            SERVER_PROTOCOL => 'HTTP/1.1'
        },
        1_800_000_000.5,
        4_294_967_295,
        1 << 60,
        4_294_967_295
    ],
    [   {REQUEST_METHOD => 'P' x 140, REQUEST_URI => '/abc', SERVER_PROTOCOL => 'HTTP/1.0'},
        1.5, 3, 0, 0
    ],
    [{}, 0, 7, 1, 1],
);

my %after;
for my $impl ('xs', 'pp') {
    no strict 'refs';
    my $start = \&{"Perennial::Scoreboard::${impl}_request_start"};
    my $done  = \&{"Perennial::Scoreboard::${impl}_request_done"};
    my $board = Perennial::Scoreboard->create(slots => 3);
    $board->claim($_, 1000 + $_, 1) for 0 .. 2;
    $board->set(1, requests => 41);    # Counted before: the first request is the 42nd
    my $map    = $board->{map};
    my $base   = 64 + 336;             # The second slot: the first and the third must not change
    my $others = sub { substr($$map, 0, $base) . substr($$map, $base + 336) };
    my $before = $others->();

    # The slot's bytes but its claim time, which differs from one board to the other
    my $slot = sub { my $s = substr($$map, $base, 336); substr($s, 24, 8) = "\0" x 8; $s };
    for my $case (@CASES) {
        my ($env, $started, $n, $bytes, $micros) = @$case;
        $start->($board, 1, $env, $started, $n);
        my $once = $slot->();
        my $req  = $done->($board, 1, $bytes, $micros, $n + 1);
        push @{$after{$impl}}, [$once, $slot->(), $req];
    }
    ok $others->() eq $before, "$impl: nothing beside the slot changed";
    my $read = $board->slot(1);
    is_deeply [@$read{qw(state conn_requests client request requests slot_requests)}],
        ['W', 8, '', '  ', 45, 4], "$impl: the slot reads back as written";
    is_deeply [map { $_->[2] } @{$after{$impl}}], [42 .. 45], "$impl: the worker's counts";
}
is $after{pp}[0][1] =~ s/\0+//gr =~ /GET \/ HTTP\/1\.1/ ? 1 : 0, 1, 'the request line is written';
for my $i (0 .. $#CASES) {
    ok $after{xs}[$i][0] eq $after{pp}[$i][0], "case $i: request_start's bytes, C as Perl";
    ok $after{xs}[$i][1] eq $after{pp}[$i][1], "case $i: request_done's bytes, C as Perl";
}

# The state letter and a script's limits, from both
my %armed;
for my $impl ('xs', 'pp') {
    my $board = Perennial::Scoreboard->create(slots => 2);
    my $state = \&{"Perennial::Scoreboard::${impl}_state"};
    $state->($board, 1, 'K');
    is $board->state_of(1) . $board->state_of(0), 'K.', "$impl state: that slot's letter only";
    $board->request_start(1, {REMOTE_ADDR => 'c'}, 1_700_000_000.5, 0);
    my $arm = \&{"Perennial::Scoreboard::${impl}_arm"};
    $arm->($board, 1, 30, 2.5);
    my $slot = $board->slot(1);
    $armed{$impl} = [@$slot{qw(armed_for deadline slow)}];
}
is_deeply $armed{xs}, [1_700_000_000.5, 30, 2.5], 'C arm: the limits, for the request running';
is_deeply $armed{xs}, $armed{pp},                 'as Perl arms it';
eval { Perennial::Scoreboard::xs_state(Perennial::Scoreboard->create(slots => 1), 0, 'KW') };
like $@, qr/not one letter/, 'C state: one letter, or nothing is written';

# A map attached to read (a status tool's) is refused, not written
{
    my $file  = File::Temp::tempdir(CLEANUP => 1) . '/board';
    my $board = Perennial::Scoreboard->create(slots => 1, file => $file);
    my $read  = Perennial::Scoreboard->attach($file);
    eval { Perennial::Scoreboard::xs_state($read, 0, 'W') };
    like $@, qr/read-only/, 'C: a map attached to read is not written';
    eval { Perennial::Scoreboard::xs_request_start($read, 0, {}, 0, 0) };
    like $@, qr/read-only/, 'C: nor by a request\'s writes';
}

# A slot outside the map is refused, not written
my $board = Perennial::Scoreboard->create(slots => 1);
eval { Perennial::Scoreboard::xs_request_done($board, 1000, 0, 0, 0) };
like $@, qr/outside the map/, 'C: a slot past the end of the map is refused';

done_testing;
