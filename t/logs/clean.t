use v5.36;
use Test::More;
use Perennial::Log::Format;

# A value from the client is written to a log as Apache's ap_escape_logitem writes it: the
# quote, the backslash and \b \n \r \t \v after a backslash, every other byte that is not
# printable ASCII as \xNN, everything else as it is (t/apache/access_log.t asks Apache)
my %named
    = ('"' => '\\"', '\\' => '\\\\', 8 => '\\b', 10 => '\\n', 13 => '\\r', 9 => '\\t', 11 => '\\v');
for my $byte (0 .. 255) {
    my $char   = chr $byte;
    my $escape = $byte < 0x20 || $byte > 0x7e || $char eq '"' || $char eq '\\';
    my $want   = !$escape ? $char : $named{$char} // $named{$byte} // sprintf('\\x%02x', $byte);
    is Perennial::Log::Format::clean("a${char}b"), "a${want}b", sprintf 'byte 0x%02x', $byte;
}
is Perennial::Log::Format::clean(undef),                 '-',                   'nothing: -';
is Perennial::Log::Format::clean(''),                    '',                    'empty stays empty';
is Perennial::Log::Format::clean("caf\x{263a}"),         'caf\x263a',           'a wide character';
is Perennial::Log::Format::clean('GET /a?b=c HTTP/1.1'), 'GET /a?b=c HTTP/1.1', 'a plain line';

done_testing;
