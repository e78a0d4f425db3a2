package Perennial::HTTP::Request;
use v5.36;
use Exporter         qw(import);
use HTTP::Parser::XS qw(parse_http_request);

# Bytes to a PSGI environment: the request head, judged as Apache's HttpProtocolOptions Strict
# judges it (or Unsafe). No I/O here: the connection loop reads, these functions judge the bytes.
# The body's framing and chunked decoding are Perennial::HTTP::Body's.

our @EXPORT_OK
    = qw(decoded_path head_ready judged_hosts offending parse_head registered_method token without_dot_segments);

# A header line that is not "token:" (a space in the name, obsolete line folding) is refused:
# both are ways to make two servers disagree on where a request ends
my $TOKEN     = qr/[!#\$%&'*+.^_`|~0-9A-Za-z-]+/;    # RFC 9110's tchar, one or more
my $BAD_FIELD = qr/\n(?!$TOKEN:)(?=[^\r\n])/;

# RFC 9110's token, for what else reads one (chunk extensions, trailer fields)
sub token () {$TOKEN}

# A Host header: a name or an IPv4 address, or an IPv6 address in brackets, and a port; $1 is
# the name, $2 the port
my $HOST = qr/\A([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?\z/;

# As Apache's Strict host check: a run of dots is a way into the file system where a name
# becomes a path; digits and dots are an IPv4 address, four numbers without leading zeros;
# a name's last label starts with a letter. Unsafe keeps only the first rule and the port.
sub _host_ok ($host, $unsafe) {
    my ($name, $port) = $host =~ $HOST or return 0;
    return 0                 if defined $port && ($port < 1 || $port > 65535);
    return 0                 if index($name, '..') >= 0;
    return $name !~ /::.*::/ if ord $name == ord '[';    # One "::" in an IPv6 address
    return 1                 if $unsafe;
    $name =~ s/\.\z//;
    if ($name !~ tr/0-9.//c) {
        my @parts = split /\./, $name, -1;
        return @parts == 4 && !grep { !/\A(?:0|[1-9]\d{0,2})\z/ || $_ > 255 } @parts;
    }
    return $name !~ /\.[^A-Za-z][^.]*\z/;
}

my $PARSER_FIELDS = 127;    # The most header fields HTTP::Parser::XS reads (picohttpparser's 128)

# A request line as most are: a token, one space, a path without a fragment, one space, the
# version as written, CRLF
my $PLAIN_LINE = qr{\A$TOKEN /[^ #\r\n]* HTTP/1\.[01]\r\n};

# Methods that HTTP and WebDAV register (HttpProtocolOptions RegisteredMethods allows no other)
my %REGISTERED = map { $_ => 1 } qw(GET HEAD POST PUT DELETE CONNECT OPTIONS TRACE PATCH
    PROPFIND PROPPATCH MKCOL COPY MOVE LOCK UNLOCK VERSION-CONTROL CHECKOUT UNCHECKOUT CHECKIN
    UPDATE LABEL REPORT MKWORKSPACE MKACTIVITY BASELINE-CONTROL MERGE);

# Whether a method is one of those (Apache's method number is not M_INVALID)
sub registered_method ($method) { $REGISTERED{$method} ? 1 : 0 }

# Returns the length of the head, 0 when more bytes are needed, or minus an HTTP error status.
# $limits: line, fields and field_size (LimitRequest*), unsafe (HttpProtocolOptions Unsafe) and
# registered (HttpProtocolOptions RegisteredMethods).
sub parse_head ($buf_ref, $env, $limits) {
    _skip_empty_lines($buf_ref, $limits) if ord $$buf_ref == 13 || ord $$buf_ref == 10;
    my $eol = index $$buf_ref, "\n";
    return _refused($env, 400, 'an empty line before its request line ends in a bare LF')
        if $eol == 0;
    return _refused($env, 414, "its request line is longer than LimitRequestLine ($limits->{line})")
        if $eol > $limits->{line} + 1 || ($eol < 0 && length $$buf_ref > $limits->{line} + 1);
    my $len = _parsed($buf_ref, $env);
    return _incomplete($buf_ref, $eol, $env, $limits) if $len == -2;

    if ($len < 0) {
        my @refusal = _too_many($buf_ref, $eol, $limits);
        return _refused($env, @refusal ? @refusal : _malformed($$buf_ref, $eol));
    }

    # The usual request line is judged in one match; any other, rule by rule
    return (
        $$buf_ref =~ $PLAIN_LINE && !$limits->{registered}
        ? 0
        : _request_line($buf_ref, $eol, $env, $limits)
        )
        || _header_lines($buf_ref, $eol, $len, $env, $limits)
        || _judged($env, $limits)
        || _head_kept($buf_ref, $env, $len);
}

# The head's length; a TRACE's head kept as sent, which it is answered with (TraceEnable On:
# Perennial::Dispatch)
sub _head_kept ($buf_ref, $env, $len) {
    $env->{'perennial.head'} = substr $$buf_ref, 0, $len if $env->{REQUEST_METHOD} eq 'TRACE';
    return $len;
}

# The head as the parser reads it: its length in $$buf_ref, as parse_http_request's. Where the
# head ends, and whether its bytes are good, is the parser's answer on the bytes as sent; only
# then, and only when a field's name in that head has an underscore, is the head parsed again
# without those fields (a head ended by a bare LF must not end later for want of such a line,
# and a CR in a line taken out must still be refused). An underscore in the target, a value or
# the body (a cookie's `_ga`) costs at most the look at the names, and a head without one
# nothing. The pattern leads with its newline and does not backtrack: with a lookbehind first,
# perl tried it at every byte of the head (43.7k instructions a 380-byte head, now 11.9k).
my $UNDERSCORED = qr/\n([^:\r\n_]*+_[^:\r\n]*+):([^\n]*+)(?=\n)/;    # A line: its name, its value

sub _parsed ($buf_ref, $env) {
    my $len = parse_http_request($$buf_ref, $env);
    _trimmed($env) if $len > 0 && substr($$buf_ref, 0, $len) =~ /[ \t]\r?\n/;
    my $underscore = index $$buf_ref, '_';
    return $len
        if $len <= 0
        || $underscore < 0
        || $underscore >= $len
        || substr($$buf_ref, 0, $len) !~ $UNDERSCORED;
    my $clean = _without_underscores(substr($$buf_ref, 0, $len), $env);
    delete @$env{grep {/\A(?:HTTP_|CONTENT_(?:LENGTH|TYPE)\z)/} keys %$env};    # The fields'
    return parse_http_request($clean, $env) == length $clean ? $len : -1;
}

# The white space after a field's value is not the value's (RFC 9110 5.5), as Apache reads it
# (`Content-Length: 5 `, `Host: example.org `); the parser keeps it. A head with some: its
# fields' values without it.
sub _trimmed ($env) {
    for my $key (grep { index($_, 'HTTP_') == 0 || index($_, 'CONTENT_') == 0 } keys %$env) {
        $env->{$key} =~ s/[ \t]+\z//;
    }
    return;
}

# The parser reads a field name as its environment's key, with "_" for "-": `Transfer_Encoding`
# would frame the body as Transfer-Encoding does, and `X_Remote_User` would join `X-Remote-User`,
# which a proxy in front may be the only one to set. A proxy reads neither as those, and Apache
# keeps them out of a script's environment (nginx drops them). So a head's fields whose names
# have an underscore are left out of what the parser reads: the head without them, their names
# in perennial.dropped for the log
sub _without_underscores ($head, $env) {
    my (@names, %values);
    $head =~ s/$UNDERSCORED/push @names, $1; _keep_value(\%values, $1, $2); ''/ge;
    $env->{'perennial.dropped'}     = join ', ', @names;
    $env->{'perennial.underscored'} = \%values;    # For SetEnvIf, which Apache's sees them
    return $head;
}

# A field left out, by its lower-case name, its value without the white space around it (two of
# the same name joined, as the parser joins others)
sub _keep_value ($values, $name, $value) {
    $value =~ s/\A[ \t]+|[ \t\r]+\z//g;
    $values->{lc $name} = defined $values->{lc $name} ? "$values->{lc $name}, $value" : $value;
    return;
}

# A head not complete yet: 0 to wait for more, unless it is past a limit already
sub _incomplete ($buf_ref, $eol, $env, $limits) {
    return 0
        if length $$buf_ref <= $limits->{field_size}
        && ($$buf_ref =~ tr/\n//) <= $limits->{fields} + 1;
    my ($status, $why) = _field_limits(substr($$buf_ref, $eol + 1), $limits);
    return $status ? _refused($env, $status, $why) : 0;
}

# Empty lines before a request line are skipped, as RFC 9112 2.2 asks and Apache does (a client
# may end a POST body with one); in Strict only CRLF ones
sub _skip_empty_lines ($buf_ref, $limits) {
    if   ($limits->{unsafe}) { $$buf_ref =~ s/\A(?:\r?\n)+// }
    else                     { $$buf_ref =~ s/\A(?:\r\n)+// }
    return;
}

# The request line as the parser read it: ended by CRLF, its version written as it says (the
# parser reads "HTTP/1.01" as 1.1), its method a token (the parser takes any bytes up to a space)
sub _request_line ($buf_ref, $eol, $env, $limits) {
    return _refused($env, 505, _version_refused($env->{SERVER_PROTOCOL}))
        if $env->{SERVER_PROTOCOL} !~ m{\AHTTP/1\.[01]\z};
    my $cr = substr($$buf_ref, $eol - 1, 1) eq "\r";
    return _refused($env, 400, 'its request line ends in a bare LF, not CRLF')
        if !$cr && !$limits->{unsafe};
    return _refused($env, 400, 'its HTTP version is not written "HTTP/1.0" or "HTTP/1.1"')
        if substr($$buf_ref, $eol - $cr - 9, 9) ne " $env->{SERVER_PROTOCOL}";
    my $method = $env->{REQUEST_METHOD};
    return _refused($env, 400, 'its method is not a token (letters, digits and !#$%&\'*+-.^_`|~)')
        if ($method =~ tr/!#$%&'*+.^_`|~0-9A-Za-z-//c && !$limits->{unsafe}) || $method eq '';
    return _refused($env, 501,
        'its method is not one HTTP registers (HttpProtocolOptions ' . 'RegisteredMethods)')
        if $limits->{registered} && !$REGISTERED{$method};
    return 0;
}

# The header lines: "name: value" each (a space in the name and obsolete line folding are both
# ways to make two servers disagree on where a request ends), ended by CRLF, within the limits.
# Every CR is followed by LF (the parser refuses a bare CR), so fewer CRs than LFs is a bare LF.
sub _header_lines ($buf_ref, $eol, $len, $env, $limits) {
    my $head  = substr $$buf_ref, $eol, $len - $eol;
    my $lines = $head =~ tr/\n//;
    return _refused($env, 400, 'a header line ends in a bare LF, not CRLF')
        if $lines != ($head =~ tr/\r//) + 1 && !$limits->{unsafe};
    return _refused(
        $env, 400,
        'a header line is not "name: value" (a space before its colon, or obsolete line folding)',
        substr($head, $-[0] + 1) =~ /\A([^\r\n]*)/ ? $1 : ''
    ) if $head =~ $BAD_FIELD;
    my $expect = $env->{HTTP_EXPECT};
    return _refused($env, 417, 'the only Expect it may send is 100-continue', "Expect: $expect")
        if defined $expect && $expect ne '' && lc $expect ne '100-continue';
    if (length $head > $limits->{field_size} || $lines > $limits->{fields} + 2) {
        my ($status, $why) = _field_limits($head, $limits);
        return _refused($env, $status, $why) if $status;
    }
    return 0;
}

# What the parsed head says: its version, its Host, its target (an absolute URL gives the Host),
# its path (merged here, once, before anything routes it); 0 when it may go on, else minus the
# status
sub _judged ($env, $limits) {
    my $host = $env->{HTTP_HOST};
    return _refused($env, 400, 'it has more than one Host header', "Host: $host")
        if defined $host && index($host, ',') >= 0;
    return _refused($env, 400, 'an HTTP/1.1 request needs a Host header')
        if !defined $host && $env->{SERVER_PROTOCOL} eq 'HTTP/1.1';
    return _refused($env, 501, 'CONNECT asks for a proxy, and this server is not one')
        if $env->{REQUEST_METHOD} eq 'CONNECT';
    my $uri = $env->{REQUEST_URI};
    if (ord $uri != ord '/' || index($uri, '#') >= 0 || index($uri, '%00') >= 0) {
        my $refused = _target($env, $uri, $limits->{unsafe});
        return $refused if $refused;
        $host = $env->{HTTP_HOST};
    }
    return _refused($env, 400, 'its Host is not a name or an address, with a port of 1 to 65535',
        "Host: $host")
        if defined $host && !($limits->{hosts}{$host} // _host_known($host, $limits));

    # MergeSlashes On (Apache's default): a run of slashes is one slash where locations and
    # files are found, before the dot segments go, as ap_normalize_path does
    $env->{PATH_INFO} =~ s{//+}{/}g
        if $limits->{merge_slashes} && index($env->{PATH_INFO}, '//') >= 0;
    if (index($env->{PATH_INFO}, '/.') >= 0) {
        $env->{PATH_INFO} = without_dot_segments($env->{PATH_INFO})
            // return _refused($env, 400, 'its path climbs above the root');
    }
    return 0;
}

# Host values judged in advance, as a listener's limits keep them (Perennial::Listener::Options)
sub judged_hosts ($unsafe, @hosts) {
    return {map { ($_ => _host_ok($_, $unsafe) ? 1 : 0) } @hosts};
}

# A Host value not judged before on these limits: $limits->{hosts} keeps the judgements (a
# thousand at most, emptied before the next is stored), as most requests repeat a few values
# and a match costs 3k instructions
sub _host_known ($host, $limits) {
    my $known = $limits->{hosts} //= {};
    %$known = () if keys %$known >= 1000;
    return $known->{$host} = _host_ok($host, $limits->{unsafe}) ? 1 : 0;
}

# A target that is not a plain path (RFC 9112 3.2): "*" for OPTIONS; an absolute URL, whose
# host replaces the Host header (3.2.2); no CONNECT (this is not a proxy); no fragment and no
# user name in Strict. A path with %00 keeps it encoded: no NUL byte reaches PATH_INFO.
sub _target ($env, $uri, $unsafe) {
    if ($uri eq '*') {
        return 0 if $env->{REQUEST_METHOD} eq 'OPTIONS';
        return _refused($env, 400, 'its target is "*", which only OPTIONS may have');
    }
    return _refused($env, 400, 'its target has a fragment ("#"), which a client never sends')
        if index($uri, '#') >= 0 && !$unsafe;
    if (ord $uri != ord '/') {
        my ($auth) = $uri =~ m{\Ahttps?://([^/?#]*)}si
            or return _refused($env, 400,
            'its target is not a path ("/..."), a URL ("http://host/...") or "*"');
        my ($user, $name) = $auth =~ /\A(?:(.*)@)?(.*)\z/s;
        return _refused($env, 400, 'its target names a user (a name and password before its host)')
            if defined $user && !$unsafe;
        $env->{HTTP_HOST} = $name;
    }
    $env->{PATH_INFO} = _decoded_target($uri);
    return 0;
}

# The path a target names (a path's, or an absolute URL's after its host), percent-decoded
sub _decoded_target ($uri) {
    my $path = ($uri =~ m{\Ahttps?://[^/?#]*(.*)\z}si ? $1 : $uri) =~ s/[?#].*//sr;
    return decoded_path(ord $path == ord '/' ? $path : "/$path");
}

# The path a request's target names, as PATH_INFO is made of it before any location takes its
# part: percent-decoded, without dot segments (the access log's %U, Apache's r->uri). A target
# that is neither a path nor a URL ("*") is itself; one that climbs above the root, its path
# decoded.
sub target_path ($uri) {
    return $uri if ord $uri != ord '/' && $uri !~ m{\Ahttps?://}i;
    my $path = _decoded_target($uri);
    return index($path, '/.') >= 0 ? without_dot_segments($path) // $path : $path;
}

# A URL path percent-decoded as HTTP::Parser::XS decodes a client's, but an encoded NUL kept as
# %00: no NUL byte reaches PATH_INFO, from a client or from an internal redirect
sub decoded_path ($path) {
    return $path =~ s/%([0-9A-Fa-f]{2})/$1 eq '00' ? '%00' : chr hex $1/ger;
}

# Minus the status, with the reason for the log and the answer (a sentence of the server's own,
# never the client's bytes)
sub _refused ($env, $status, $why, $bytes = undef) {
    $env->{'perennial.refused'} = $why;
    offending($env, $bytes) if defined $bytes;
    return -$status;
}

# The client's bytes that broke a rule, for the log only (escaped there), 200 at most
sub offending ($env, $bytes) {
    $env->{'perennial.offending'} = length $bytes > 200 ? substr($bytes, 0, 200) . '...' : $bytes;
    return;
}

# Why the parser refused a head: (status, reason)
# Why the parser refused a head: (status, reason, and the header line at fault if it was one)
sub _malformed ($buf, $eol) {
    my $line = substr $buf, 0, $eol < 0 ? length $buf : $eol;
    return (505, _version_refused("HTTP/$1")) if $line =~ m{ HTTP/(\d\.\d)\r?\z} && $1 !~ /\A1\./;
    return (400, 'its request line is not "METHOD TARGET HTTP/x.y"')
        if $line !~ m{\A$TOKEN ([^ \x00-\x1f\x7f]+) HTTP/\d\.\d\r?\z};
    return (400, 'its target has a "%" that is not followed by two hex digits (as Apache refuses)')
        if $1 =~ /%(?![0-9A-Fa-f]{2})/;
    my ($bad) = grep { /[\x00-\x08\x0a-\x1f\x7f]/ || !/\A$TOKEN:/ }
        split /\r?\n/, substr($buf, $eol + 1) =~ s/\r?\n\r?\n.*//sr;
    return (400, 'a header line is malformed (a control character, or no "name:")', $bad);
}

sub _version_refused ($version) {
    return $version eq 'HTTP/2.0'
        ? 'an HTTP/2 connection preface: this server speaks HTTP/1.1 and HTTP/1.0'
        : 'its HTTP version is not 1.0 or 1.1';
}

# RFC 3986 5.2.4 on an absolute path: "." segments go, ".." takes the segment before it away
# ("/a/./b/../c" is "/a/c"; "/a/b/.." is "/a/"); undef when a ".." would climb above "/", which
# Apache answers with 400 too, unless $at_root says to stop there, as the RFC does
sub without_dot_segments ($path, $at_root = 0) {
    my @parts = split m{/}, $path, -1;
    shift @parts;    # What is before the first slash
    my @kept;
    while (@parts) {
        my $part = shift @parts;
        if ($part ne '.' && $part ne '..') { push @kept, $part; next }
        if ($part eq '..') {
            return if !@kept && !$at_root;    # Above the root
            pop @kept;
        }
        push @kept, '' unless @parts;         # A last "." or "..": a directory, with its slash
    }
    return '/' . join '/', @kept;
}

# Whether a head still arriving is worth parsing now: its request line has just come (a bad one
# is refused at once), its end has (an empty line), or a line or the count of them is past a
# limit. $scan remembers how far the bytes were looked at, so a head that trickles in is read
# once in all, not again from its start with every piece (that was quadratic).
sub head_ready ($buf_ref, $scan, $limits) {
    _skip_empty_lines($buf_ref, $limits)
        if !$scan->{line} && (ord $$buf_ref == 13 || ord $$buf_ref == 10);
    my $len = length $$buf_ref;
    if (!$scan->{line}) {
        my $eol = index $$buf_ref, "\n";
        return $len > $limits->{line} + 1 ? 1 : 0 if $eol < 0;
        @$scan{qw(line start lines)} = (1, $eol + 1, 0);
        return 1;
    }
    while ((my $eol = index $$buf_ref, "\n", $scan->{start}) >= 0) {
        my $field = $eol - $scan->{start};
        $scan->{start} = $eol + 1;
        return 1 if $field <= 1 && substr($$buf_ref, $eol - $field, $field) !~ /[^\r]/;    # The end
        return 1 if $field > $limits->{field_size} + 1 || ++$scan->{lines} > $limits->{fields};
    }
    return $len - $scan->{start} > $limits->{field_size} ? 1 : 0;
}

# The parser refuses a head of more than $PARSER_FIELDS fields as it refuses a malformed one:
# too many is 431, whether LimitRequestFields or the parser says so (the head's lines only)
sub _too_many ($buf_ref, $eol, $limits) {
    my $end  = index $$buf_ref, "\n\r\n", $eol;
    my $head = substr $$buf_ref, $eol + 1, $end < 0 ? length($$buf_ref) : $end - $eol;
    my ($status, $why) = _field_limits($head, $limits);
    return ($status, $why) if $status;
    return (431,     "it has more header fields than this server reads ($PARSER_FIELDS)")
        if ($head =~ tr/\n//) > $PARSER_FIELDS;
    return;
}

sub _field_limits ($head, $limits) {
    my @lines = grep {length} split /\r?\n/, $head;
    return (431, "it has more header fields than LimitRequestFields ($limits->{fields})")
        if @lines > $limits->{fields};
    for (@lines) {
        return (431, "a header field is longer than LimitRequestFieldSize ($limits->{field_size})")
            if length > $limits->{field_size};
    }
    return;
}

1;

__END__

=head1 NAME

Perennial::HTTP::Request - judge the bytes of an HTTP/1.x request

=head1 SYNOPSIS

    use Perennial::HTTP::Request qw(parse_head);
    my $len = parse_head(\$buf, \%env, {line => 8190, fields => 100, field_size => 8190});

=head1 DESCRIPTION

Parses a request head with L<HTTP::Parser::XS> into PSGI keys and judges it as Apache 2.4's
C<HttpProtocolOptions Strict> and RFC 9112 do: LimitRequestLine (414), LimitRequestFields and
LimitRequestFieldSize (431); a method that is a token; a target that is a path, an C<http://>
URL (its host replaces the Host header) or C<*> for OPTIONS, without a fragment or a user
name; the version written C<HTTP/1.0> or C<HTTP/1.1> (505 for others, HTTP/2's preface
named); lines ended by CRLF; header lines C<name: value> (a space in the name and obsolete
folding are refused); one Host, required in HTTP/1.1, that is a name or an address; Expect
only C<100-continue>; no CONNECT (501). Each refusal is minus its status, with a sentence in
C<< $env->{'perennial.refused'} >>. C<unsafe> in the limits relaxes what Apache's C<Unsafe>
does; C<registered> refuses methods HTTP does not register (501).

=head1 FUNCTIONS

=head2 parse_head

    my $len = parse_head(\$buf, \%env, $limits);

Returns the head's length in bytes, 0 when the head is incomplete, or minus an error status
(-400, -414, -417, -431, -501, -505). C<PATH_INFO> comes out decoded, each run of slashes one
when C<< $limits->{merge_slashes} >> (C<MergeSlashes>), and without dot segments (an encoded NUL
stays C<%00>); a path whose C<..> would climb above C</> is -400, with the
reason in C<< $env->{'perennial.refused'} >>. Empty lines before the request line are skipped.

=head2 head_ready

    my %scan;
    my $len = head_ready(\$buf, \%scan, $limits) ? parse_head(\$buf, \%env, $limits) : 0;

True when the bytes so far are worth a parse: the request line is complete (the first time),
the head is, or a line or the number of lines is past its limit. Each byte is looked at once.

=head2 judged_hosts

    my $hosts = judged_hosts($unsafe, '127.0.0.1:8529', 'www.example.org');    # {name => 1 or 0}

Host values judged as a request's Host is judged (a name or an address, with a port of 1 to
65535; C<$unsafe> as HttpProtocolOptions Unsafe), in a hash as the limits' C<hosts> keeps its
judgements: a listener's are made once in the manager (L<Perennial::Listener::Options>).

=head2 registered_method

    my $known = Perennial::HTTP::Request::registered_method('PROPFIND');    # 1

Whether HTTP or WebDAV registers the method (what C<HttpProtocolOptions RegisteredMethods>
allows, and what Apache does not take as an invalid method).

=head2 token

    my $re = token();    # qr/[!#$%&'*+.^_`|~0-9A-Za-z-]+/

RFC 9110's token, for the other readers of a request's grammar.

=head2 decoded_path

    decoded_path('/caf%C3%A9/a%2Fb/x%00y');    # "/caf\xc3\xa9/a/b/x%00y"

A URL path percent-decoded, an encoded NUL kept as C<%00>.

=head2 without_dot_segments

    without_dot_segments('/a/./b/../c');    # /a/c
    without_dot_segments('/../etc');        # undef: above the root
    without_dot_segments('/../etc', 1);     # /etc: stopped at the root

=cut
