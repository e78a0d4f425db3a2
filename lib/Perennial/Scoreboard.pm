package Perennial::Scoreboard;
use v5.36;
use Carp        qw(croak);
use Fcntl       qw(O_CREAT O_EXCL O_RDWR);
use File::Map   qw(map_anonymous map_file);
use Time::HiRes ();
use Perennial::Twins;

# One fixed-size slot per possible worker in shared memory. Writing a field is a substr on
# the mapped string: no system call. Apache's state letters:
#   _ waiting   S starting   R reading   W writing   K keep-alive   L logging   C closing
#   G gracefully finishing   I idle cleanup   . open slot
my ($HEADER, $SLOT, $NOTE, $MAGIC) = (64, 336, 8192, 'PERENNS4');

# magic, slots, manager, started, generation, parked, spooled, draining
my $HEAD_PACK   = 'a8 N N d N N Q N';
my $SLOT_PACK   = 'a1 x3 N N N N N d d Q Q Q a48 a144 d f f Q a40 N N N N';
my @SLOT_FIELDS = qw(state pid generation requests conn_requests last_micros started
    request_started slot_requests slot_bytes bytes client request armed_for deadline slow
    slot_micros vhost rss pss shared private);

# A request's writes (its start and end, the state letter, a script's limits): in C
# (xs/Scoreboard.xs), or their Perl twins below
Perennial::Twins::install(__PACKAGE__, qw(request_start request_done state arm));
my %FIELD = (
    state           => [0,   'a1'],
    pid             => [4,   'N'],
    generation      => [8,   'N'],
    requests        => [12,  'N'],
    conn_requests   => [16,  'N'],
    last_micros     => [20,  'N'],
    started         => [24,  'd'],
    request_started => [32,  'd'],
    slot_requests   => [40,  'Q'],
    slot_bytes      => [48,  'Q'],
    bytes           => [56,  'Q'],
    client          => [64,  'a48'],
    request         => [112, 'a144'],
    armed_for       => [256, 'd'],
    deadline        => [264, 'f'],
    slow            => [268, 'f'],
    slot_micros     => [272, 'Q'],
    vhost           => [280, 'a40'],
    rss             => [320, 'N'],      # What a worker measured of itself (KB), for those who
    pss             => [324, 'N'],      # cannot read its /proc: see published_memory
    shared          => [328, 'N'],
    private         => [332, 'N'],
);

sub attach ($class, $file) {
    my $self = bless {file => $file}, $class;
    map_file my $map, $file, '<';
    $self->{map} = \$map;
    my (undef, $slots, $pid, $started, $generation) = $self->header_values;
    croak "$file is not a Perennial scoreboard" if substr($map, 0, 8) ne $MAGIC;
    $self->{slots} = $slots;
    return $self;
}

sub create ($class, %args) {
    my $slots = $args{slots} or croak 'slots is required';
    my $size  = $HEADER + ($SLOT + $NOTE) * $slots;
    my $self  = bless {slots => $slots, file => $args{file}}, $class;
    my $map;
    my $file = $args{file};
    if (defined $file) {

        # A new file put in place, never the old one emptied: after a hot upgrade the old
        # manager's workers still write to theirs. It is filled in before it is renamed, so
        # a reader never finds it without its header.
        # Only its owner reads it: each slot holds its last request line, query string and all
        my $new = "$file.$$";
        unlink $new;
        sysopen(my $fh, $new, O_RDWR | O_CREAT | O_EXCL, 0600)
            or die "Can't create scoreboard \"$new\": $!\n";
        truncate($fh, $size) or die "Can't size scoreboard \"$new\": $!\n";
        close $fh;
        map_file $map, $new, '+<';
        $self->{map} = \$map;
        $self->_fill;
        rename $new, $file or die "Can't create scoreboard \"$file\": $!\n";
        $self->{inode} = (stat $file)[1];
        return $self;
    }
    map_anonymous $map, $size, 'shared';
    $self->{map} = \$map;
    $self->_fill;
    return $self;
}

# The time limits of the request now running (seconds, 0: none), for the manager's watchdog;
# they hold only while request_started is still the one they were set for
sub pp_arm ($self, $i, $deadline, $slow) {
    my $base = $HEADER + $SLOT * $i;
    my $map  = $self->{map};
    substr($$map, $base + 256, 16) = substr($$map, $base + 32, 8) . pack('f f', $deadline, $slow);
}

sub claim ($self, $i, $pid, $generation) {
    my $now = Time::HiRes::time();
    my $old = $self->slot($i);
    substr(${$self->{map}}, $HEADER + $SLOT * $i, $SLOT) = pack($SLOT_PACK,
        'S', $pid, $generation, 0, 0, 0, $now, 0, $old->{slot_requests}, $old->{slot_bytes}, 0, '',
        '',  0,    0,           0, $old->{slot_micros}, '', 0, 0, 0, 0);
    $self->note($i, '');
}

# A slot's requests, bytes and microseconds over its life, without reading the rest
sub counters ($self, $i) {
    my $base = $HEADER + $SLOT * $i;
    return (
        unpack('Q Q', substr(${$self->{map}}, $base + 40,  16)),
        unpack('Q',   substr(${$self->{map}}, $base + 272, 8))
    );
}

sub generation ($self, $set = undef) {
    substr(${$self->{map}}, 24, 4) = pack 'N', $set if defined $set;
    return unpack 'N', substr(${$self->{map}}, 24, 4);
}

# Connections the parking process holds (Perennial::Park::Lot), which it writes as they change
sub parked ($self, $set = undef) {
    substr(${$self->{map}}, 28, 4) = pack 'N', $set if defined $set;
    return unpack 'N', substr(${$self->{map}}, 28, 4);
}

# Bytes of the spools the parking process holds (the files of slow readers' rests, on disk until
# they are sent), which it writes as they change
sub spooled ($self, $set = undef) {
    substr(${$self->{map}}, 32, 8) = pack 'Q', $set if defined $set;
    return unpack 'Q', substr(${$self->{map}}, 32, 8);
}

# Whether the manager is draining (a graceful stop's GracefulStopDrain: still serving, while the
# health page says it is going), which it writes
sub draining ($self, $set = undef) {
    substr(${$self->{map}}, 40, 4) = pack 'N', $set ? 1 : 0 if defined $set;
    return unpack 'N', substr(${$self->{map}}, 40, 4);
}

sub header_values ($self) { unpack $HEAD_PACK, substr(${$self->{map}}, 0, $HEADER) }

# A worker's notes: a few kilobytes of text of its own, written rarely (the scripts it has
# compiled, for the Perl status view), read by any process that maps the scoreboard
sub note ($self, $i, $text) {
    utf8::encode($text) if utf8::is_utf8($text);
    $text = substr($text, 0, $NOTE - 4) if length $text > $NOTE - 4;
    substr(${$self->{map}}, $self->_note_at($i), 4 + length $text) = pack 'N/a*', $text;
}

sub note_of ($self, $i) { unpack 'N/a*', substr(${$self->{map}}, $self->_note_at($i), $NOTE) }

# A worker's own memory figures (KB: rss, pss, shared, private), written by the worker: its
# siblings cannot read its /proc files once it has given root up
sub publish_memory ($self, $i, $m) {
    substr(${$self->{map}}, $HEADER + $SLOT * $i + 320, 16) = pack 'N4',
        @$m{qw(rss pss shared private)};
}

# What publish_memory wrote for a slot, or undef when nothing was
sub published_memory ($class, $slot) {
    return unless $slot->{rss};
    return {map { $_ => $slot->{$_} } qw(rss pss shared private)};
}

sub release ($self, $i) {
    my $old = $self->slot($i);
    substr(${$self->{map}}, $HEADER + $SLOT * $i, $SLOT) = pack($SLOT_PACK,
        '.', 0, 0, 0, 0, 0, 0, 0,
        $old->{slot_requests} // 0,
        $old->{slot_bytes}    // 0,
        0,  '', '', 0, 0, 0, $old->{slot_micros} // 0,
        '', 0,  0,  0, 0);
}

# Removes the scoreboard file, unless another manager's has taken its place
sub remove ($self) {
    my $file = $self->{file} // return;
    unlink $file if defined $self->{inode} && ((stat $file)[1] // -1) == $self->{inode};
}

# A request ended: its bytes and time added to the counts the slot holds (read from it, as the
# C reads them), and the count of requests on its connection ($n); returns the worker's count
sub pp_request_done ($self, $i, $bytes, $micros, $n) {
    my $base = $HEADER + $SLOT * $i;
    my $map  = $self->{map};
    my $req  = unpack('N', substr($$map, $base + 12, 4)) + 1;
    my ($sreq, $sbytes, $wbytes) = unpack 'Q Q Q', substr($$map, $base + 40, 24);
    my $smicros = unpack('Q', substr($$map, $base + 272, 8)) + $micros;
    substr($$map, $base + 12,  12) = pack 'N N N', $req, $n, $micros;
    substr($$map, $base + 40,  24) = pack 'Q Q Q', $sreq + 1, $sbytes + $bytes, $wbytes + $bytes;
    substr($$map, $base + 272, 8)  = pack 'Q',     $smicros;
    return $req;
}

# A request of $env begins, after $done others on its connection: the slot is busy (W) with
# the client, the request line and the time it began
sub pp_request_start ($self, $i, $env, $started, $done) {
    my $base = $HEADER + $SLOT * $i;
    my $map  = $self->{map};
    my $line = join ' ', map { $_ // '' } @$env{qw(REQUEST_METHOD REQUEST_URI SERVER_PROTOCOL)};
    substr($$map, $base,      1)   = 'W';
    substr($$map, $base + 16, 4)   = pack 'N',        $done;
    substr($$map, $base + 32, 8)   = pack 'd',        $started;
    substr($$map, $base + 64, 192) = pack 'a48 a144', $env->{REMOTE_ADDR} // '', $line;
    return;
}

sub set ($self, $i, $field, $value) {
    my ($offset, $type) = @{$FIELD{$field} // croak "Unknown scoreboard field '$field'"};
    my $packed = pack $type, $value;
    substr(${$self->{map}}, $HEADER + $SLOT * $i + $offset, length $packed) = $packed;
}

sub slot ($self, $i) {
    my %slot;
    @slot{@SLOT_FIELDS} = unpack $SLOT_PACK, substr(${$self->{map}}, $HEADER + $SLOT * $i, $SLOT);
    s/\0+\z// for @slot{qw(client request vhost)};
    $slot{slot} = $i;
    return \%slot;
}

sub slots ($self) { $self->{slots} }

sub pp_state ($self, $i, $state) { substr(${$self->{map}}, $HEADER + $SLOT * $i, 1) = $state }

sub state_of ($self, $i) { substr(${$self->{map}}, $HEADER + $SLOT * $i, 1) }

sub _fill ($self) {
    substr(${$self->{map}}, 0, $HEADER) = pack(
        'a' . $HEADER,
        pack($HEAD_PACK, $MAGIC, $self->{slots}, $$, Time::HiRes::time(), 0, 0, 0, 0)
    );
    $self->release($_) for 0 .. $self->{slots} - 1;
}

sub _note_at ($self, $i) { $HEADER + $SLOT * $self->{slots} + $NOTE * $i }

1;

__END__

=head1 NAME

Perennial::Scoreboard - per-worker state in shared memory

=head1 SYNOPSIS

    my $board = Perennial::Scoreboard->create(slots => 256, file => 'perennial.pid.scoreboard');
    $board->claim(0, $pid, 1);
    $board->state(0, '_');
    my $slot = Perennial::Scoreboard->attach('perennial.pid.scoreboard')->slot(0);

=head1 DESCRIPTION

A fixed-size slot for each possible worker (ServerLimit of them), mapped shared between the
manager and the workers, optionally backed by a file so that C<perennial status> can read it.
Each slot holds the state letter (Apache's C<_ S R W K L C G I .>), pid, generation,
requests and bytes for this worker and for the slot over its life, the duration of the last
request and of all the slot's requests, the client and the current request line. Updates are
writes to mapped memory. After the slots, each slot has 8 KB of notes: text its worker
publishes now and then, such as the scripts it has compiled.

=head1 METHODS

=head2 attach

    my $board = Perennial::Scoreboard->attach($file);

Maps an existing scoreboard file read-only.

=head2 arm

    $board->arm($slot, 30, 5);    # deadline and slow-request time of the current request

Gives the request now running in the slot its time limits in seconds (0: none). They belong to
that request only: the next C<request_start> makes them stale.

=head2 claim

    $board->claim($slot, $pid, $generation);

Marks a slot as starting (C<S>) for a new worker; the slot's lifetime counters carry on.

=head2 counters

    my ($requests, $bytes, $micros) = $board->counters($slot);

A slot's totals over its life, read without the rest of the slot.

=head2 create

    my $board = Perennial::Scoreboard->create(slots => $n, file => $path_or_undef);

Creates a new scoreboard, in a file or in anonymous shared memory.

=head2 generation

    $board->generation($n);

Reads or sets the manager's current generation.

=head2 parked

    $board->parked($n);    # the parking process
    my $n = $board->parked;

The number of idle connections the parking process holds (L<Perennial::Park::Lot>).

=head2 spooled

    $board->spooled($bytes);    # the parking process
    my $bytes = $board->spooled;

The bytes of the spooled responses (L<Perennial::HTTP::Spool>) the parking process holds, for
C<ParkSpoolLimit>.

=head2 header_values

    my ($magic, $slots, $manager_pid, $started, $generation, $parked) = $board->header_values;

=head2 note, note_of

    $board->note($slot, "one line per compiled script\n");
    my $text = $board->note_of($slot);

Writes or reads a slot's notes (up to 8 KB; longer text is cut). A new worker starts with none.

=head2 publish_memory

    $board->publish_memory($slot, {rss => 20000, pss => 9000, shared => 17000, private => 3000});

A worker's own memory figures in KB, for the status pages: a worker that gave up root cannot
have its C</proc> files read by its siblings.

=head2 published_memory

    my $m = Perennial::Scoreboard->published_memory($board->slot($i));    # or undef

=head2 release

    $board->release($slot);

Marks a slot open (C<.>) after its worker exited.

=head2 remove

    $board->remove;

Removes the file of a scoreboard this process created, if it is still the one at that path.

=head2 request_done

    my $served = $board->request_done($slot, $bytes, $micros, $nth_on_connection);

Counts a finished request, the C<$nth_on_connection> of its connection, into the slot's
counters (the worker is their only writer once the manager has claimed the slot), and returns
the worker's request count.

=head2 request_start

    $board->request_start($slot, $env, Time::HiRes::time(), $done_before);

Marks the slot busy (C<W>) with the request's client (C<REMOTE_ADDR>) and line
(C<REQUEST_METHOD>, C<REQUEST_URI>, C<SERVER_PROTOCOL>), when it began and how many requests
its connection finished before it.

=head2 set

    $board->set($slot, conn_requests => 0);

Writes one field.

=head2 slot

    my $s = $board->slot(3);    # {state => '_', pid => 4242, requests => 17, ...}

Reads one slot.

=head2 slots

    my $n = $board->slots;

=head2 state, state_of

    $board->state($slot, 'K');
    my $letter = $board->state_of($slot);

=cut
