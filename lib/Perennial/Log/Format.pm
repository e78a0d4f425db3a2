package Perennial::Log::Format;
use v5.36;
use POSIX                    qw(strftime);
use Time::HiRes              ();
use Perennial::HTTP::Request ();
use Perennial::Twins;

# mod_log_config's LogFormat: a format string compiled once into a list of pieces (text, or a
# field: the sub that gives it, its argument and its letter), joined per request. Apache's
# directives where they mean something here; values that come from the client are escaped as
# Apache escapes them.

# Apache's standard nicknames, and Perennial's own default: combined plus the duration in
# microseconds, which bench and tune read
our %NICKNAMES = (    ## no critic (ProhibitPackageVars) read by Config for LogFormat
    common         => '%h %l %u %t "%r" %>s %b',
    combined       => '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    vhost_combined => '%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"',
    combinedio     => '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %I %O',
    referer        => '%{Referer}i -> %U',
    agent          => '%{User-agent}i',
    perennial      => '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D',
);

my @MONTH = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

# Each directive: $r is {env, status, bytes, micros, headers, vhost, keep_alive, head_bytes}
my %FIELD = (
    a => \&_client,
    h => \&_client,
    A => sub ($r, $arg) { $r->{env}{SERVER_NAME} // '-' },
    B => sub ($r, $arg) { $r->{bytes}            // 0 },
    b => sub ($r, $arg) { $r->{bytes} ? $r->{bytes} : '-' },
    D => sub ($r, $arg) { $r->{micros} },
    e => sub ($r, $arg) { clean($r->{env}{$arg} // $ENV{$arg}) },
    f => sub ($r, $arg) { clean($r->{env}{SCRIPT_FILENAME}) },
    H => sub ($r, $arg) { $r->{env}{SERVER_PROTOCOL} // '-' },
    i => sub ($r, $key) { clean($r->{env}{$key}) },                 # The env key, from _env_key
    I => sub ($r, $arg) {
        ($r->{env}{'perennial.head_bytes'} // 0) + ($r->{env}{CONTENT_LENGTH} || 0);
    },
    k => sub ($r, $arg) {0},
    l => sub ($r, $arg) {'-'},
    m => sub ($r, $arg) { clean($r->{env}{REQUEST_METHOD}) },
    n => sub ($r, $arg) {'-'},
    o => sub ($r, $arg) { clean(_header_out($r->{headers}, $arg)) },
    O => sub ($r, $arg) { ($r->{head_bytes} // 0) + ($r->{bytes} // 0) },
    p => sub ($r, $arg) {
        $arg eq 'remote' ? $r->{env}{REMOTE_PORT} // '-' : $r->{env}{SERVER_PORT} // '-';
    },
    P => sub ($r, $arg) {$$},
    q => sub ($r, $arg) {
        length($r->{env}{QUERY_STRING} // '') ? clean("?$r->{env}{QUERY_STRING}") : '';
    },
    r => sub ($r, $arg) {
        clean($r->{env}{'perennial.line'}
                // "$r->{env}{REQUEST_METHOD} $r->{env}{REQUEST_URI} $r->{env}{SERVER_PROTOCOL}");
    },
    R => sub ($r, $arg) {'-'},
    s => sub ($r, $arg) { $r->{status} },
    t => \&_time,
    T => sub ($r, $arg) {
              $arg eq 'ms' ? int($r->{micros} / 1000)
            : $arg eq 'us' ? $r->{micros}
            :                int($r->{micros} / 1e6);
    },
    u => sub ($r, $arg) { clean($r->{env}{REMOTE_USER} // '-') },
    U => sub ($r, $arg) {                                           # Decoded, as Apache's r->uri
        my $uri = $r->{env}{REQUEST_URI};
        clean(defined $uri ? Perennial::HTTP::Request::target_path($uri) : undef);
    },
    v => sub ($r, $arg) { $r->{vhost} // $r->{env}{SERVER_NAME} // '-' },
    V => sub ($r, $arg) {
        clean((($r->{env}{HTTP_HOST} // $r->{env}{SERVER_NAME} // '-') =~ s/:\d+\z//r));
    },
    X => sub ($r, $arg) { $r->{keep_alive} ? '+' : '-' },
);

# %a and %h: the client (after RemoteIPHeader); %{c}a and %{c}h: the peer of the connection,
# the proxy's address behind one
sub _client ($r, $arg) {
    my $env = $r->{env};
    return ($arg eq 'c' ? $env->{'perennial.peer'} // $env->{REMOTE_ADDR} : $env->{REMOTE_ADDR})
        // '-';
}

# Compiles a format; dies with the reason when it has a directive Apache does not know
sub compile ($class, $format) {
    my @pieces;
    my $rest = $format;
    while (length $rest) {
        if ($rest =~ s/\A([^%]+)//s) { push @pieces, _unescape($1); next }
        if ($rest =~ s/\A%%//)       { push @pieces, '%';           next }
        $rest =~ s/\A%[<>]?!?(?:\d{3}(?:,\d{3})*)?(?:\{([^}]*)\})?([a-zA-Z])//
            or die "bad LogFormat at '" . substr($rest, 0, 10) . "'\n";
        my ($arg, $letter) = ($1 // '', $2);
        my $field = $FIELD{$letter} or die "unknown LogFormat directive %$letter\n";
        push @pieces, [$field, $letter eq 'i' ? _env_key($arg) : $arg, $letter];
    }
    return bless {pieces => \@pieces, format => $format}, $class;
}

# One line, with its newline: in C (xs/Format.xs, which makes the common fields itself and
# calls the subs of the others), or in Perl
Perennial::Twins::install(__PACKAGE__, qw(line));

sub pp_line ($self, $r) {
    my $line = '';
    for my $piece (@{$self->{pieces}}) {
        $line .= ref $piece ? $piece->[0]->($r, $piece->[1]) : $piece;
    }
    return "$line\n";
}

# The request's time; Apache's own format is made once a second (localtime and strftime cost
# more than the rest of a line)
sub _time ($r, $arg) {
    my $now = int Time::HiRes::time();
    if (length $arg && $arg !~ /\A(?:begin|end):?\z/) { return strftime($arg, localtime $now) }
    state $second = -1;
    state $text   = '';
    return $text if $now == $second;
    my @t = localtime $now;
    $second = $now;
    return $text = sprintf '[%02d/%s/%04d:%02d:%02d:%02d %s]', $t[3], $MONTH[$t[4]], $t[5] + 1900,
        @t[2, 1, 0], strftime('%z', @t);
}

# A request header's key in the PSGI environment, worked out once
sub _env_key ($name) {
    my $key = uc($name) =~ tr/-/_/r;
    return $key =~ /\ACONTENT_(?:TYPE|LENGTH)\z/ ? $key : "HTTP_$key";
}

# A response header's values, joined; undef when it has none (or no response was made)
sub _header_out ($headers, $name) {
    my @found;
    for (my $i = 0; $headers && $i < @$headers; $i += 2) {
        push @found, $headers->[$i + 1] if lc $headers->[$i] eq lc $name;
    }
    return @found ? join(', ', @found) : undef;
}

# As Apache's ap_escape_logitem: the quote, the backslash and \b \n \r \t \v after a backslash,
# other bytes that are not printable ASCII as \xNN; nothing: -. (One class, and a look before
# any substitution: the alternation of two classes, captured, cost 8k instructions for each
# field of each line, with nothing to escape)
my %NAMED = (
    '"'    => '\\"',
    '\\'   => '\\\\',
    "\b"   => '\\b',
    "\n"   => '\\n',
    "\r"   => '\\r',
    "\t"   => '\\t',
    "\x0b" => '\\v'
);

sub clean ($text) {
    return '-' unless defined $text;
    return $text if $text !~ /[^\x20\x21\x23-\x5b\x5d-\x7e]/;
    $text =~ s{([^\x20\x21\x23-\x5b\x5d-\x7e])}{$NAMED{$1} // sprintf '\\x%02x', ord $1}ge;
    return $text;
}

# \n, \t, \" and \\ in the format's text, as Apache reads them
sub _unescape ($text) {
    my %esc = (n => "\n", t => "\t", '"' => '"', '\\' => '\\');
    return $text =~ s/\\([nt"\\])/$esc{$1}/gr;
}

1;

__END__

=head1 NAME

Perennial::Log::Format - Apache's LogFormat, compiled once

=head1 SYNOPSIS

    my $format = Perennial::Log::Format->compile('%h %l %u %t "%r" %>s %b %D');
    syswrite $fh, $format->line({env => $env, status => 200, bytes => 6, micros => 153});

=head1 DESCRIPTION

Compiles an Apache C<LogFormat> string: C<%a> C<%h> (the address: Perennial makes no DNS
lookups; C<%{c}a> and C<%{c}h> the connection's peer, the proxy behind C<RemoteIPHeader>)
C<%A> C<%B> C<%b> C<%D> C<%{VAR}e> C<%f> C<%H> C<%{Header}i> C<%I> C<%l> C<%m>
C<%{Header}o> C<%O> C<%p> C<%{remote}p> C<%P> C<%q> C<%r> C<%s> C<%E<gt>s> C<%t>
C<%{strftime}t> C<%T> C<%{ms|us|s}T> C<%u> C<%U> (the path decoded, without dot segments, as
Apache's) C<%v> (the virtual host's ServerName) C<%V>
(the Host the client asked for) C<%X> and C<%%>. C<%k>, C<%n> and C<%R> have nothing to show
(0 or C<->). Status conditions (C<%400,501{...}i>) are read and ignored. C<%I> counts the
request head and body, C<%O> the response head and body. Values from the client are escaped as
Apache escapes them (C<\">, C<\\>, C<\t>, C<\n>, C<\r>, C<\b>, C<\v>, and C<\xNN> for any
other byte that is not printable ASCII), so that log analysers read them as they read
Apache's. The nicknames C<common>, C<combined>, C<vhost_combined>,
C<combinedio>, C<referer>, C<agent> and Perennial's C<perennial> (combined with C<%D>) are
predefined.

=head1 METHODS

=head2 compile

    my $format = Perennial::Log::Format->compile($string);    # dies on an unknown directive

=head2 clean

    my $safe = Perennial::Log::Format::clean($text_from_a_client);

The text as Apache escapes it in logs (its ap_escape_logitem): the quote, the backslash and
the controls C<\b> C<\n> C<\r> C<\t> C<\v> after a backslash, any other byte that is not
printable ASCII as C<\xNN>; C<-> for nothing.

=head2 line

    my $text = $format->line(\%request);

=cut
