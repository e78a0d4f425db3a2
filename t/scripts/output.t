use v5.36;
use Test::More;
use Perennial::Executor::Output;

# What a resident script prints becomes the same response through the C print as through its
# Perl twin: head and body in one print or many, $, and $\, numbers, undef, wide characters,
# an object that makes itself a string, a capture variable, binmode layers, autoflush, a body
# past the buffer, an nph- script, a bad head. (t/apache/cgi_output.t compares real scripts
# with mod_cgi; t/http/pure_perl.t runs it again on the Perl twin.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Output::xs_PRINT;

package Stringy {
    use overload '""' => sub {'<object>'};
    sub new { bless {}, shift }
}

my $WIDE  = "caf\x{e9} \x{263a}";
my %CASES = (
    'head and body at once' => sub { print "Content-Type: text/plain\n\nhello\n" },
    'line by line'          => sub {
        print "Content-Type: text/plain\n";
        print "Status: 201 Made\n\n";
        print "line $_\n" for 1 .. 50;
    },
    'a list, $, and $\\' => sub {
        print "Content-Type: text/plain\n\n";
        print 'a', 'b';
        local ($,, $\) = ('-', "!\n");
        print 'c', 'd';
    },
    'numbers and undef' => sub {
        print "Content-Type: text/plain\n\n";
        print 42, 1.5, undef, "\n";
    },
    'undef, warnings off' => sub {
        no warnings;
        print "Content-Type: text/plain\n\n";
        print undef, "\n";
    },
    'wide characters' => sub {
        print "Content-Type: text/plain\n\n";
        print $WIDE;
    },
    'Latin-1 upgraded' => sub {
        print "Content-Type: text/plain\n\n";
        my $s = "caf\x{e9}";
        utf8::upgrade($s);
        print $s;
    },
    'an object and a capture' => sub {
        print "Content-Type: text/plain\n\n";
        print Stringy->new, "\n";
        'x=y' =~ /(y)/ and print $1;
    },
    'binmode :utf8' => sub {
        binmode STDOUT, ':utf8';
        print "Content-Type: text/plain\n\n", $WIDE;
    },
    'binmode :crlf' => sub {
        print "Content-Type: text/plain\n\n";
        binmode STDOUT, ':crlf';
        print "a\nb\n";
    },
    'autoflush' => sub {
        $| = 1;
        print "Content-Type: text/plain\n\n";
        print "one\n";
        print "two\n";
        $| = 0;
        print "three\n";
    },
    'past the buffer' => sub {
        print "Content-Type: text/plain\n\n";
        print 'x' x 1000 for 1 .. 20;
    },
    'no blank line' => sub { print "Content-Type: text/plain\n"; print "oops\n" },
    'a bad header'  => sub { print "Bad Header Line\n\nbody\n" },
    'CRLF head, its blank line split over prints' => sub {
        print "Content-Type: text/plain\r\n";
        print "X-One: 1\r\n\r";
        print "\nbody\r\n";
    },
    'the head in pieces, LF then CRLF' => sub {
        print 'Content-';
        print "Type: text/plain\n", 'Status: 404 Gone', "\n\r\n";
        print 'after';
    },
    'a head and a body past the buffer in one print' =>
        sub { print "Content-Type: text/plain\n\n" . ('y' x 10_000) },
    'a local redirect'  => sub { print "Location: /elsewhere\n\nignored" },
    'a URL redirect'    => sub { print "Location: http://example.com/\n\n" },
    'a bad Status'      => sub { print "Status: 9xx\nContent-Type: text/plain\n\n" },
    'an interim Status' => sub { print "Status: 100 Continue\nContent-Type: text/plain\n\nbody" },
    'a value with a CR' => sub { print "X-A: b\rc\nContent-Type: text/plain\n\n" },
    'an empty head'     => sub { print "\n\nbody" },
    'a Latin-1 head'    => sub { print "Content-Type: text/plain\nX-Name: caf\xe9\n\nbody" },
    'a head past its limit'                      => sub { print 'X-Long: ' . ('z' x 70_000) },
    'a bad line after a good one, printed apart' => sub {
        print "Content-Type: text/plain\n";
        print "Bad Line\n\nbody";
    },
    'a Latin-1 value after a plain line, printed apart' => sub {
        print "Content-Type: text/plain\n";
        print "X-Name: caf\xe9\n\nbody";
    },
    'a head past its limit in pieces' => sub { print 'X-Long: '; print 'z' for 1 .. 70_000 },
    'numbers in the head' => sub { print 'Status: ', 201, "\nContent-Type: text/plain\n\n", 7 },
    'printf and syswrite-like write' => sub {
        print "Content-Type: text/plain\n\n";
        printf "%05d|", 42;
        print 'after';
    },
);

# What the client would get: the response, each part the writer was given, and the errors
sub run ($impl, $case, $nph = 0) {
    no warnings 'redefine';
    local *Perennial::Executor::Output::PRINT = \&{"Perennial::Executor::Output::${impl}_PRINT"};
    my @got;
    my $writer = bless {got => \@got}, 'Writer';
    my $out    = Perennial::Executor::Output->new(
        nph     => $nph,
        respond => sub ($res) {
            push @got, ['respond', $res->[0], $res->[1], $res->[2]];
            return $writer;
        }
    );
    my @warnings;
    {
        local $SIG{__WARN__} = sub { push @warnings, $_[0] =~ s/ at .*//sr };
        local *STDOUT;
        tie *STDOUT, 'Perennial::Executor::Output', $out;
        local $| = 0;
        my $ok = eval { $CASES{$case}->(); 1 };
        push @got, ['died', $@ =~ s/ at .*//sr] unless $ok;
        no warnings 'untie';
        untie *STDOUT;
    }
    push @got, ['finish', $out->finish // 'ok'], ['warnings', @warnings];
    return \@got;
}

sub Writer::write ($self, $bytes) { push @{$self->{got}}, ['write', $bytes] }
sub Writer::close ($self)         { push @{$self->{got}}, ['close'] }

for my $case (sort keys %CASES) {
    my $c = run('xs', $case);
    is_deeply $c, run('pp', $case), "C and Perl agree: $case";
    is_deeply run('xs', $case, 1), run('pp', $case, 1), "C and Perl agree: $case, nph"
        if $case =~ /once|line by line/;
}

# And what they agree on is right
my $lines = run('xs', 'line by line');
is $lines->[0][1],    201,                                 'the status from the head';
is $lines->[0][3][0], join('', map {"line $_\n"} 1 .. 50), 'every line in one body';
my $flushed = run('xs', 'autoflush');
is_deeply [map { $_->[1] } grep { $_->[0] eq 'write' } @$flushed], ["one\n", "two\n", "three\n"],
    'autoflush: each print goes out as it is made (the last at the end)';
my $big = run('xs', 'past the buffer');
ok((grep { $_->[0] eq 'write' } @$big) >= 2, 'past the buffer: the body goes out in parts');
is join('', map { $_->[1] } grep { $_->[0] eq 'write' } @$big), 'x' x 20_000, 'all of it';
like run('xs', 'no blank line')->[-2][1], qr/malformed header/, 'a head without its end';
is_deeply run('pp', 'numbers and undef')->[-1], ['warnings', 'Use of uninitialized value in print'],
    "undef printed: perl's print's warning, where the script's";
is_deeply run('pp', 'undef, warnings off')->[-1], ['warnings'],
    'and none where the script has warnings off';

done_testing;
