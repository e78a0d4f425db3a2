use v5.36;
use Test::More;
use Perennial::Log::Format;

# A value from the client is written to a log as Apache writes it: every byte that is not
# printable ASCII, and the quote and the backslash, as \xNN; everything else as it is
for my $byte (0 .. 255) {
    my $char   = chr $byte;
    my $escape = $byte < 0x20 || $byte > 0x7e || $char eq '"' || $char eq '\\';
    my $want   = $escape ? sprintf('\\x%02x', $byte) : $char;
    is Perennial::Log::Format::clean("a${char}b"), "a${want}b", sprintf 'byte 0x%02x', $byte;
}
is Perennial::Log::Format::clean(undef),                 '-',                   'nothing: -';
is Perennial::Log::Format::clean(''),                    '',                    'empty stays empty';
is Perennial::Log::Format::clean("caf\x{263a}"),         'caf\x263a',           'a wide character';
is Perennial::Log::Format::clean('GET /a?b=c HTTP/1.1'), 'GET /a?b=c HTTP/1.1', 'a plain line';

done_testing;
