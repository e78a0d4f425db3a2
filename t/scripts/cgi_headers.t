use v5.36;
use utf8;
use Test::More;
use Perennial::Executor::Output;

# A script's printed header block read in C (xs/Output.xs) gives what its Perl twin gives:
# fields, Status, Location, local redirects and every refusal, over line ends, blanks and
# bytes past ASCII (which the C hands to the Perl)

plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Output::xs_parse_cgi_headers;

my @blocks = (
    'Content-Type: text/html',
    "Content-Type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2",
    "Content-Type: text/html\nX-Two: 2\n",
    "Content-Type: text/html\n\n\n",
    "Content-Type:text/plain",
    "Content-Type: \t text/plain \t ",
    'X-Empty:',
    'X-Empty:   ',
    'Status: 404 Not Found',
    'Status: 200',
    "Status: 302\nLocation: /elsewhere",
    'Status: 2000',
    'Status: 200a',
    'Status: 200_',
    'Status: 200-ok',
    'Status: 099',
    'Status: 600',
    'Status: 100 Continue',
    'Status: 199',
    'Status: 20',
    "Status:\t500\tOops",
    "Status: 404\nStatus: 410",
    'status: 201',
    'STATUS: 204',
    'Location: /local/path?x=1',
    'Location: http://example.test/',
    'Location: ',
    "location: /a\nLocation: /b",
    "Location: /a\nStatus: 301",
    'Status: 304',
    '',
    "\n",
    "\nContent-Type: text/plain",
    "Content-Type: text/plain\n\nX: y",
    'no colon here',
    'Bad Name: x',
    ': no name',
    'X :space before the colon',
    "X: a\rb",
    "X: a\r",
    "X: a\r\r",
    "A: b\n\r",
    "A: b\r\n\r",
    'X-Tab\t: x',
    "Weird!#\$%&'*+.^_`|~-Name: ok",
    "X: caf\xe9",
    'X: café ☺',
    "Status: 200\xe9",
    "X: \x00nul",
    ('X-Many: ' . ('v' x 2000)),
    (join "\n", map {"H$_: $_"} 1 .. 60),
);

for my $block (@blocks) {
    my $name = $block =~ s/([^\x20-\x7e])/sprintf '\\x{%x}', ord $1/ger;
    is_deeply [Perennial::Executor::Output::xs_parse_cgi_headers($block)],
        [Perennial::Executor::Output::pp_parse_cgi_headers($block)], "'$name'";
}

subtest 'over a head set another way, the Perl reads it (for both)' => sub {
    my @base = ('Content-Type', 'text/plain', 'X-Base', '1');
    is_deeply [Perennial::Executor::Output::xs_parse_cgi_headers('Content-Type: text/html', \@base)
        ],
        [Perennial::Executor::Output::pp_parse_cgi_headers('Content-Type: text/html', \@base)],
        'the printed Content-Type wins over the base';
};

done_testing;
