package Perennial::Executor::Output;
use v5.36;
use Exporter qw(import);
use Perennial::Executor::Layers;
use Perennial::Twins;

# What a CGI script prints, turned into a PSGI response. The CGI header block is parsed as
# mod_cgi parses it; the body is buffered up to 8 KiB, and goes out as soon as the script
# flushes (autoflush, or more than the buffer), so long-running scripts stream. Used as the
# tied STDOUT of resident scripts and as the reader of a forked script's output.

our @EXPORT_OK = qw(cgi_head field_name parse_cgi_headers);

# A header field's name: an RFC 9110 token
my $FIELD_NAME = qr/[!#\$%&'*+.^_`|~0-9A-Za-z-]+/;
sub field_name () {$FIELD_NAME}

# The same name alone, and a header line, each compiled once: a pattern that interpolates
# $FIELD_NAME is put together again each time it runs
my $NAME_ALONE = qr/\A$FIELD_NAME\z/;
my $FIELD_LINE = qr/\A($FIELD_NAME):[ \t]*(.*?)[ \t]*\z/s;

my $BUFFER     = 8192;
my $HEAD_LIMIT = 65_536;

# print and the header block's reading: in C (xs/Output.xs), or their Perl twins below; and
# with the C, the PerlIO layer that a script's STDOUT is (Perennial::Executor::Handles)
Perennial::Twins::install(__PACKAGE__, qw(PRINT parse_cgi_headers unbuffer on_stdout module_head));

sub new ($class, %args) { $class->for_script($args{respond}, $args{nph}) }

# The same, for a script's request: its fields in order, not named (a request's way is short)
sub for_script ($class, $respond, $nph) {
    return bless {respond => $respond, nph => $nph, head => '', body => '', status => undef},
        $class;
}

# The same, for a mod_perl handler's response: the request object answers for it from the start,
# as attach_request has it answer (nothing can be buffered yet on a STDOUT that it is not yet).
# Without PerlOptions +ParseHeaders what it prints is body, and its head is taken from the
# object when the body first leaves (past the buffer, rflush, $|) or at the end: a header, a
# status or a content type set after a print still goes, as mod_perl's buffer has it.
sub for_request ($class, $respond, $r) {
    return bless {
        respond => $respond,
        head    => '',
        body    => '',
        request => $r,
        pending => $r->{set}{parse_headers} ? 0 : 1
    }, $class;
}

# Adds bytes the script wrote. Returns false once the output is known to be bad.
sub add ($self, $bytes) {
    return 0                             if $self->{closed};     # Or bad (_fail)
    return $self->_with_children($bytes) if $self->{children};
    if (!$self->{headers}) {
        return $self->_body_first($bytes) if $self->{pending};
        if (!($self->{request} && $self->_head_from_request($bytes))) {
            my ($answer, $rest) = $self->_read_head($bytes);
            return $answer if defined $answer;
            $bytes = $rest;
        }
    }
    $self->{body} .= $bytes;
    return 1     if $self->{local};    # A local redirect replaces the response: keep it back
    $self->flush if $self->{nph} || $self->{autoflush} || length $self->{body} > $BUFFER;
    return 1;
}

# Bytes while the header block is read: add's answer while it is not whole (or is bad), else
# (undef, what follows it)
sub _read_head ($self, $bytes) {
    return 0 if $self->{error};
    $self->{head} .= $bytes;
    my ($head, $rest) = split /\r?\n\r?\n/, $self->{head}, 2;
    if (!defined $rest) {
        return $self->_fail("no end of the header block in the first $HEAD_LIMIT bytes")
            if length $self->{head} > $HEAD_LIMIT;
        return 1;
    }
    my ($status, $headers, $err, $local)
        = $self->{nph}
        ? $self->_nph_head($head, $rest)
        : parse_cgi_headers($head, $self->{base});
    return $self->_fail($err) if $err;
    @$self{qw(status headers head local)} = ($status, $headers, '', $local);
    return (undef, $rest);
}

# A handler module's bytes before its head is taken (for_request): body, under the head its
# request object gives when the body first leaves; unless the object sent a head of its own
sub _body_first ($self, $bytes) {
    if ($self->{request}{head_sent}) {    # What came before it goes first (send_http_header)
        $self->{pending} = 0;
        return $self->add(delete($self->{body}) . $bytes);
    }
    $self->{body} .= $bytes;
    $self->flush if $self->{autoflush} || length $self->{body} > $BUFFER;
    return 1;
}

# An nph- script's head, read, and kept as it was written
sub _nph_head ($self, $head, $rest) {
    $self->{nph_head} = substr $self->{head}, 0, length($self->{head}) - length $rest;
    return _parse_nph($head);
}

sub close ($self) { $self->{closed} = 1 }

# The script started processes (Perennial::Executor::Children): what they wrote comes first;
# in a process it forked, what it prints goes where the children's output goes
sub _with_children ($self, $bytes) {
    return _to_descriptor_1($bytes) if $self->{children}{pid} != $$;
    my $children = delete $self->{children};
    while (sysread $children->{read}, my $part, 65_536) { $self->add($part) }
    my $ok = $self->add($bytes);
    $self->{children} = $children;
    return $ok;
}

# What the script's child processes wrote since it last printed, before what it prints next
sub take_children ($self) { $self->_with_children('') }

# The script's child processes were lent files of their own (Perennial::Executor::Children):
# what they write there is read before each of the script's own bytes, until they are taken
# back. The lending, or nothing.
sub lend_children ($self, $lent) { $self->{children} = $lent; return }
sub children      ($self)        { $self->{children} }

# The children's last bytes, then the output is the script's alone again; the lending
sub take_back_children ($self) {
    $self->take_children;
    return delete $self->{children};
}

# A process the script forked prints where its own children would: to descriptor 1, which the
# script's process reads
sub _to_descriptor_1 ($bytes) {
    state $fd1 = do { open(my $fh, '>&=', 1) or return 0; $fh->autoflush(1); $fh };
    return print {$fd1} $bytes;
}

sub error ($self) { $self->{error} }

# Ends the response (with the head of a request object, $request, when none was printed).
# Returns an error message when the script never produced a valid head.
sub finish ($self, $request = undef) {
    module_head($self, $request) || $self->set_head($request->head_fields)    # _take_head, no call
        if $request && !$self->{headers};
    return $self->{error} if $self->{error};
    if (!$self->{headers}) {
        my $seen = substr($self->{head}, 0, 60) =~ s/\s+/ /gr;
        $self->_fail(
            length $seen
            ? "malformed header from script (no blank line after the header): '$seen'"
            : 'End of script output before headers'
        );    # Apache's words for nothing at all
        return $self->{error};
    }
    if ($self->{writer}) {
        $self->{writer}->write($self->{body}) if length $self->{body};
        $self->{writer}->close;
    }
    else { $self->{respond}->([$self->{status}, $self->{headers}, [$self->{body}]]) }
    $self->{body} = '';
    return;
}

sub flush ($self) {
    return unless $self->{headers} || $self->{pending} && $self->_take_head($self->{request});
    $self->{writer} //= $self->_writer;
    $self->{writer}->write($self->{body}) if length $self->{body};
    $self->{body} = '';
}

# The request object's head: a handler module's usual one in C, else as the object gives it
sub _take_head ($self, $request) {
    return module_head($self, $request) || $self->set_head($request->head_fields);
}

# An nph- script's bytes go to the client as it wrote them, where the server can pass them
# through (Perennial's can); elsewhere its head is read and the body sent by the server
sub _writer ($self) {
    my $writer = $self->{respond}->([$self->{status}, $self->{headers}]);
    $writer->pass_through($self->{nph_head}) if $self->{nph} && $writer->can('pass_through');
    return $writer;
}

# Another response was sent in this one's place ($r->internal_redirect): it goes to the client
# now, and what the script prints after is dropped
sub hand_over ($self, $res) {
    die "internal_redirect after the response began\n" if $self->{writer};
    @$self{qw(closed handed)} = (1, 1);
    return ref $res eq 'CODE' ? $res->($self->{respond}) : $self->{respond}->($res);
}

sub has_head ($self) { $self->{headers} ? 1 : 0 }

# A request object (mod_perl's $r, Perennial::ModPerl) answers for the output from now on: its
# methods add to it directly, so the script's prints must reach it as they are made, not from
# perl's buffer later
sub attach_request ($self, $r) {
    $self->{request} = $r;
    unbuffer($self);
    return;
}

# The request object no longer answers for it (its script or handler ended): whether another
# response went in this one's place (hand_over, for $r->internal_redirect)
sub detach_request ($self) {
    delete $self->{request};
    return $self->{handed};
}

# What the script's STDOUT buffered goes to the output, and its prints from now on; a tied
# STDOUT (the Perl twin) has no buffer
sub pp_unbuffer ($self) {return}

# The output the script's STDOUT writes to now, if it is one
sub pp_on_stdout () {
    my $tied = tied *STDOUT;
    return ref $tied eq __PACKAGE__ ? $tied : undef;
}

# The layers of the script's STDOUT now (Perennial::Executor::Layers, or undef): the tie's, or
# those above the output's on its handle
sub stdout_layers ($self) {
    return $self->{layers} // Perennial::Executor::Layers->of_handle(\*STDOUT);
}

# A Location that is a local path, with no Status: RFC 3875's local redirect, when it can still
# be followed (nothing went out, the output is good); not on an ErrorDocument's page ($env's
# perennial.status), which keeps its error's status and sends the Location as it is, as
# mod_cgi does (it follows one only under status 200)
sub local_redirect ($self, $env = {}) {
    return
        $self->{local} && !$self->{writer} && !$self->{error} && !defined $env->{'perennial.status'}
        ? $self->{local}
        : undef;
}

sub set_autoflush ($self, $on) { $self->{autoflush} = $on }

# The head as name => value fields rather than printed, read by the same rules (Status,
# Location, no CR or LF in a value); what was printed before it is body. False when a head was
# already there, none was given, or it is bad (then the output is an error, as for a bad
# printed head).
sub set_head ($self, @fields) {
    return 0 if $self->{headers} || !@fields;
    my ($status, $headers, $err, $local) = cgi_head(@fields);
    return $self->_fail($err) if $err;
    @$self{qw(status headers local body head)}
        = ($status, $headers, $local, $self->{head} . $self->{body}, '');
    return 1;
}

sub started ($self) { $self->{writer} ? 1 : 0 }

# Whether anything was written at all
sub printed ($self) { $self->{headers} || length $self->{head} || length $self->{body} ? 1 : 0 }

# A head set through the request object (mod_perl's $r), asked for before the first bytes: the
# bytes are body under it, or a printed head that is read over it (+ParseHeaders). True once
# the head is set.
sub _head_from_request ($self, $bytes) {
    return 1 if module_head($self);    # A handler module's usual head, at once
    my $r = $self->{request};
    return 0 if $self->{nph} || $self->{base} || length $self->{head};
    my ($printed, @fields) = $r->head_for_output($bytes);
    return 0 unless @fields;
    if ($printed) { $self->{base} = \@fields; return 0 }
    return $self->set_head(@fields);
}

# A handler module's usual head set at once from its request object (xs/Output.xs): 1 once
# set. Its Perl twin sets none, and _head_from_request goes the whole way, which makes the
# same head (as pp_unbuffer has nothing to do).
sub pp_module_head ($self, $request = undef) { return 0 }

# A printed header block, as mod_cgi reads it; over the fields of a head set another way, if
# given (the printed Status and Content-Type win). In C (xs/Output.xs) for a block of ASCII
# without such a head; this is its Perl twin.
sub pp_parse_cgi_headers ($head, $base = undef) {
    my @fields;
    for my $line (split /\r?\n/, $head) {
        return (undef, undef, "malformed header from script: '$line'")
            unless $line =~ $FIELD_LINE;
        push @fields, $1, $2;
    }
    if ($base) {
        my $typed = grep { lc $fields[$_] eq 'content-type' } grep { $_ % 2 == 0 } 0 .. $#fields;
        my @keep  = @$base;
        @keep = map { @keep[$_, $_ + 1] }
            grep { lc $keep[$_] ne 'content-type' } grep { $_ % 2 == 0 } 0 .. $#keep
            if $typed;
        unshift @fields, @keep;
    }
    return _read_fields(\@fields);
}

# Header fields given as name => value, read by the same rules
sub cgi_head (@fields) {
    for my $name (@fields[grep { $_ % 2 == 0 } 0 .. $#fields]) {
        return (undef, undef, "malformed header from script: '$name'")
            unless $name =~ $NAME_ALONE;
    }
    return _read_fields(\@fields);
}

sub _fail ($self, $why) {
    @$self{qw(error closed)} = ($why, 1);
    return 0;
}

# Status: sets the status; a Location without Status is a redirect (302 for a URL; a local
# path is marked for an internal redirect by the caller). Takes the fields it is given.
sub _read_fields ($fields) {
    my ($status, @headers, $location);
    while (my ($name, $value) = splice @$fields, 0, 2) {
        return (undef, undef, "header '$name' from script holds a CR or LF") if $value =~ /[\r\n]/;
        if (lc $name eq 'status') {
            return (undef, undef, "bad Status header from script: '$value'")
                unless $value =~ /\A([2-5]\d\d)\b/;    # A final status: a 1xx is interim
            $status = $1;
            next;
        }
        $location = $value if lc $name eq 'location';
        push @headers, $name, $value;
    }
    return (undef, undef, 'empty header block from script') unless @headers || $status;
    my $local = !$status && defined $location && $location =~ m{\A/} ? $location : undef;
    $status //= defined $location ? 302 : 200;
    return ($status, \@headers, undef, $local);
}

# An nph- script writes its own status line; its headers pass through as they are
sub _parse_nph ($head) {
    my ($line, $rest) = split /\r?\n/, $head, 2;
    return (undef, undef, "nph script sent no status line: '$line'")
        unless $line =~ m{\AHTTP/1\.[01] ([1-5]\d\d)\b};

    # An interim status line (100 Continue, then the script's own final one) passes through with
    # the rest, as under mod_cgi; the server's writer, which writes none of it, is given 200
    my $status = $1 < 200 ? 200 : $1;
    my (undef, $headers, $err) = parse_cgi_headers($rest // '');
    return (undef, undef, $err) if $err && length($rest // '');
    return ($status, $headers // [], undef);
}

# The tied-handle interface, for STDOUT of resident scripts
sub TIEHANDLE ($class, $self) {$self}
sub CLOSE     ($self)         { $self->close; 1 }
sub EOF       ($self)         {1}
sub FILENO    ($self)         {undef}
sub OPEN      ($self, @args)  {0}

# A response is a stream, as mod_perl's layer is: no place to tell or seek to (-1 and false, as
# mod_perl answers; a tie without them made `tell STDOUT` die, a 500)
sub TELL ($self)                   {-1}
sub SEEK ($self, $offset, $whence) {0}

# binmode: the layers' bytes are what the client gets (Perennial::Executor::Layers)
sub BINMODE ($self, @layer) { $self->layers->push_layers(@layer) }

sub layers ($self, @new) {
    $self->{layers} = $new[0] if @new;
    return $self->{layers} //= Perennial::Executor::Layers->new;
}

# print: in C (xs/Output.xs) once the header block is read and the bytes are plain (the rest
# it leaves to this one, which is also its Perl twin)
sub pp_PRINT ($self, @list) {
    $self->{autoflush} = $|;
    my $text = do {    # An undefined value warns as perl's print does: where the script asks
        no warnings 'uninitialized';    ## no critic (ProhibitNoWarnings) said below, if asked
        join($, // '', @list) . ($\ // '');
    };
    warnings::warnif('uninitialized', 'Use of uninitialized value in print')
        if grep { !defined } @list;
    return $self->add(    # Bytes as they are unless a layer or a wide character makes others
        $self->{layers} || utf8::is_utf8($text)
        ? Perennial::Executor::Layers::bytes_of($self->{layers}, $text)
        : $text
    );
}

sub PRINTF ($self, $format, @list) {
    $self->{autoflush} = $|;
    return $self->add(
        Perennial::Executor::Layers::bytes_of($self->{layers}, sprintf $format, @list));
}

sub WRITE ($self, $buf, $len = undef, $offset = 0) {
    $self->{autoflush} = $|;
    my $part = substr $buf, $offset, $len // length $buf;
    return $self->add(Perennial::Executor::Layers::bytes_of($self->{layers}, $part))
        ? length $part
        : undef;
}

1;

__END__

=head1 NAME

Perennial::Executor::Output - a CGI script's output as a PSGI response

=head1 SYNOPSIS

    my $out = Perennial::Executor::Output->new(respond => $respond);
    tie local *STDOUT, 'Perennial::Executor::Output', $out;
    run_script();
    my $error = $out->finish;

=head1 DESCRIPTION

Parses the CGI header block (C<Status:>, C<Location:>, repeated headers such as C<Set-Cookie>,
LF or CRLF line ends) and sends the body through the PSGI responder: in one piece with its
length when the script ends within 8 KiB, or streamed (chunked for HTTP/1.1) once the script
flushes, turns on C<$|>, or writes more. Scripts named C<nph-*> write their own status line;
their bytes are never buffered and reach the client unchanged (the server adds no header and no
chunked encoding, and closes the connection after them), as under mod_cgi. A header line that is
malformed, or a value holding a CR or LF (an injection attempt), makes the output an error that
the executor turns into a 500.

=head1 METHODS

=head2 add

    $out->add($bytes) or warn $out->error;

=head2 close, finish, flush

    $out->flush;
    my $error = $out->finish;    # undef when the response went out

=head2 error, local_redirect, started

    my $error = $out->error;
    my $path  = $out->local_redirect($env);    # A Location to follow in this request, if one is

C<local_redirect> is the local path of a Location without Status while it can still be
followed: nothing of the response went out and the output is good, and the request (C<$env>)
is not an ErrorDocument's page, whose Location goes to the client as mod_cgi sends it.

=head2 parse_cgi_headers

    my ($status, $headers, $error) = parse_cgi_headers("Content-Type: text/plain\nStatus: 404");

=head2 field_name

    my $name_re = field_name();    # qr// of a header field's name (a token)

=head2 cgi_head

    my ($status, $headers, $error, $local) = cgi_head(Status => 404, 'Content-Type' => 'text/plain');

The rules C<parse_cgi_headers> applies to a printed block, for name => value fields.

=head2 hand_over, has_head, set_head

    $out->set_head(Status => 404, 'Content-Type' => 'text/html');
    $out->hand_over($other_response);    # $r->internal_redirect

When a request object (L<Perennial::ModPerl>) is attached as C<< $out->{request} >>, it is
asked for the head set through it before the first bytes are read as a CGI header block.

=head2 take_children

    $out->take_children;

Reads what the script's child processes wrote (L<Perennial::Executor::Children>) into the
output; C<add> does it before each print. In a process the script forked, C<add> writes to
descriptor 1, which the script's own process reads.

=head2 set_autoflush

    $out->set_autoflush(1);

=cut
