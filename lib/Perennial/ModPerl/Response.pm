package Perennial::ModPerl::Response;
use v5.36;
use HTTP::Date  ();
use Plack::Util ();
use Perennial::ErrorDocument;
use Perennial::ErrorPage;
use Perennial::Executor::Output qw(field_name);
use Perennial::Static;
use Perennial::Subrequest;

# Apache2::Response and Apache2::SubRequest's internal_redirect for Perennial's request object,
# and how the head set through it meets what a script prints (PerlOptions +ParseHeaders): a
# printed CGI header block is read and merged over it (its Status and Content-Type win), any
# other first output is body under the object's head, and a script that printed nothing but
# changed the status gets Apache's answer for that status, as ModPerl::Registry returns it.

my $TOKEN = field_name();    # A header field's name

sub custom_response ($self, $status, $text) { $self->{custom}{$status} = $text; return }

# The other URL's response is sent instead of this one's, now (what is printed after is lost)
sub internal_redirect ($self, $url) {
    my $dispatch = $self->{site}{dispatch} or die "Perennial can't redirect here internally\n";
    my $new      = Perennial::Subrequest->redirect(
        $self->{env}, $url,
        REQUEST_METHOD          => $self->method,
        REDIRECT_URL            => $self->uri,
        REDIRECT_QUERY_STRING   => $self->args // '',    # Each hop's own, not an earlier one's
        REDIRECT_REQUEST_METHOD => $self->method,
        REDIRECT_STATUS         => $self->status,
        'perennial.prev'        => $self
    ) or die "internal_redirect to $url: more than 10 redirects in a row\n";

    # In a phase before the response (a PerlFixupHandler's `internal_redirect(...); return
    # DONE`): the other URL's response answers the request once the phase ends
    # (Perennial::ModPerl::Phases), in place of whatever the phase returns
    if (!$self->{out}) {
        $self->{redirected}
            = Perennial::ModPerl->keeping_current($self, sub () { $dispatch->($new) });
        return;
    }
    Perennial::ModPerl->keeping_current($self,
        sub () { $self->{out}->hand_over($dispatch->($new)) });
    return;
}

# The ETag Apache makes from the file's size and modification time (weak within a second), as
# for a static file: from what the finder saw, so no stat. For a response that is no file,
# Apache's tag of the response's modification time (the request's time unless one was set), in
# microseconds, weak unless it is more than a second older than the request.
sub make_etag ($self, $force_weak = 0) {
    my $hit = $self->{hit};
    if (!$hit || !defined $hit->{mtime}) {
        my $mtime = $self->{mtime} // $self->{time};
        my $tag   = sprintf '"%x"', $mtime * 1_000_000;
        return $force_weak || $self->{time} - $mtime <= 1 ? "W/$tag" : $tag;
    }
    my $tag = Perennial::Static::etag(@$hit{qw(size mtime)});
    return $force_weak && $tag !~ m{\AW/} ? "W/$tag" : $tag;
}

# RFC 9110's preconditions against the ETag and modification time set so far: OK (0), 304 or
# 412, by the rules the static files follow (no modification time set: now, as Apache)
sub meets_conditions ($self) {
    return 0 if $self->{no_local_copy};
    my $etag = $self->{headers_out} && $self->{headers_out}->get('ETag');
    my $code = Perennial::Static::conditions($self->{env}, $etag, $self->{mtime} // time);
    return $code == 200 ? 0 : $code;
}

sub mtime ($self, @new) { $self->_field(mtime => @new) }

# Set: the request's preconditions never answer 304 or 412 (meets_conditions), as Apache's
sub no_local_copy ($self, @new) { $self->_field(no_local_copy => @new) // 0 }

sub no_cache ($self, $on = 1) {
    $self->{head_set} = 1;
    return $self->{no_cache} = $on;
}

# A head given as CGI text ("Status: 302\nLocation: ...\n\n"); what follows the blank line is body.
# CGI.pm's header under mod_perl: when nothing set through the object is to be merged with it,
# the output reads it as a printed head, in C (through Perl, 20k instructions a request)
sub send_cgi_header ($self, $text) {
    return _module_cgi_header($self, $text)    # A handler module's: read into the object
        if $self->{module} && !$self->{head_sent} && $self->{out} && !$self->{out}->has_head;
    my $printed = _printable_head($self, $text);
    $self->{head_sent} = 1 if $printed;    # So the output asks the object for no head of its own
    _head_to($self->{out}, $text, $printed);
    $self->{head_sent} = 1;
    return;
}

# A handler module's CGI head, as mod_perl reads it into the request (ap_scan_script_header):
# Status sets the status, Content-Type the content type, Location headers_out's, and the other
# fields go to err_headers_out; what follows the blank line is body. A head it cannot read dies,
# naming the line (a 500 with the reason in the log).
sub _module_cgi_header ($self, $text) {
    my ($head, $body) = split /\r?\n\r?\n/, $text, 2;
    for my $line (split /\r?\n/, $head) {
        my ($name, $value) = $line =~ /\A($TOKEN):[ \t]*(.*?)[ \t]*\z/
            or die "send_cgi_header: malformed header line '$line'\n";
        my $key = lc $name;
        if    ($key eq 'status')       { $self->status($value =~ /\A(\d{3})/ ? $1 : 500) }
        elsif ($key eq 'content-type') { $self->content_type($value) }
        elsif ($key eq 'location')     { $self->headers_out->set(Location => $value) }
        else                           { $self->err_headers_out->add($name => $value) }
    }
    $self->print($body) if defined $body && length $body;
    return;
}

# The same where no request object was made (CGI.pm's header: Perennial::Executor::CGIWraps)
sub send_cgi_header_to ($out, $text) {
    _head_to($out, $text, _printable_to($out, $text));
    return;
}

# The head to the output: printed, where that gives what adding its head and body apart gives
sub _head_to ($out, $text, $printed) {
    return $out->PRINT($text) if $printed;
    my ($head, $body) = split /\r?\n\r?\n/, $text, 2;
    $out->add("$head\n\n");
    $out->add($body) if defined $body && length $body;
    return;
}

# Whether the head, printed, gives what send_cgi_header's split and add give: nothing set or
# sent through the object, not a handler module's, a whole head of bytes and the output waiting
# for one, and nothing that a print adds or changes (no $, or $\, no autoflush, no layers of
# STDOUT's, not an nph- script's)
sub _printable_head ($self, $text) {
    return 0 if $self->{head_set} || $self->{head_sent} || $self->{module};
    return _printable_to($self->{out}, $text);
}

sub _printable_to ($out, $text) {
    return 0 if defined($,) || defined($\) || $|;
    return 0 if !$out || $out->{headers} || $out->{layers} || $out->{nph};
    return !utf8::is_utf8($text) && $text =~ /\n\r?\n/;
}

# mod_perl 1: the head goes now, with an optional content type
sub send_http_header ($self, $type = undef) {
    $self->content_type($type) if defined $type;
    $self->{head_sent} = 1;
    $self->{out}->set_head($self->head_fields);
    return;
}

sub set_content_length ($self, $length) {
    $self->headers_out->set('Content-Length' => $length);
    return;
}

sub set_etag ($self) {
    my $tag = $self->make_etag;
    $self->headers_out->set(ETag => $tag) if length $tag;
    return;
}

sub set_last_modified ($self, $mtime = undef) {
    $self->update_mtime($mtime) if defined $mtime;
    my $when = $self->{mtime} // return;
    $when = $self->{time} if $when > $self->{time};    # Never in the future
    $self->headers_out->set('Last-Modified' => HTTP::Date::time2str($when));
    return;
}

# The response's modification time: the newer of the one kept and the one given (by default,
# the file's, as the finder saw it)
sub update_mtime ($self, $mtime = undef) {
    my $hit = $self->{hit};
    $mtime //= int $hit->{mtime} if $hit && defined $hit->{mtime};    # No file: as Apache's 0
    $self->{mtime} = $mtime
        if defined $mtime && (!defined $self->{mtime} || $mtime > $self->{mtime});
    return;
}

# Nothing printed: Apache's page for a status the script set, with err_headers_out and a
# redirect's Location (or the custom_response for it); for 204 and 304, the head alone; for
# a 200, nothing (the caller sends the head)
sub unprinted_response ($self) {
    my $status = $self->status;
    return if $status == 200;
    my @keep = $self->{err_headers_out} ? $self->{err_headers_out}->pairs : ();
    if ($status < 300 || $status == 304) {
        my @fields = $status == 304 ? () : grep {defined} $self->{content_type};
        return [
            $status,
            [   @fields              ? ('Content-Type' => @fields) : (),
                $self->{headers_out} ? $self->{headers_out}->pairs : (),
                @keep
            ],
            []
        ];
    }
    my $location = $self->{headers_out} && $self->{headers_out}->get('Location');
    push @keep, Location => $location if defined $location && $status < 400;

    my $custom = $self->_custom_page($status)
        // return Perennial::ErrorPage->response($status, $self->{env}, @keep);

    # The custom page stands in for Apache's, which it is made from: the kept headers go on it
    # once, here (the page for them would carry WWW-Authenticate and Allow over a second time)
    my $res = Perennial::ErrorDocument->apply(
        $self->{env},
        {error_documents => {$status => $custom}},
        Perennial::ErrorPage->response($status, $self->{env}),
        $self->{site}{dispatch},
        'perennial.prev' => $self
    );
    return Plack::Util::response_cb($res, sub ($page) { push @{$page->[1]}, @keep; return });
}

# What stands in for Apache's page for an error status: its custom_response, unless this request
# is itself a custom or ErrorDocument page's, whose own failure gets Apache's page, as Apache's
# (no loop); else the section's ErrorDocument, as Apache's ap_die uses it after custom_response
# (the dispatcher then knows the page is not Apache's, to be replaced: Phases' made_here)
sub _custom_page ($self, $status) {
    my $own    = !defined $self->{env}{'perennial.status'};    # Not a page's own request
    my $custom = $own && $self->{custom} ? $self->{custom}{$status} : undef;
    return $custom if defined $custom;
    return undef    ## no critic (ProhibitExplicitReturnUndef) none: Apache's page
        unless Perennial::ErrorDocument->applies($self->{env}, $self->{set}, $status);
    $self->{documented} = 1;
    return $self->{set}{error_documents}{$status};
}

# Asked by the output before the first bytes: the head set through the object, and whether
# those bytes are a printed head to merge over it. (The output's print in C, xs/Output.xs,
# reads the same three fields to know that there is none: head_sent, head_set, module.)
sub head_for_output ($self, $bytes) {
    return () if $self->{head_sent};
    return (0, $self->head_fields)    # A handler's: printed bytes are body
        if $self->{module} && !$self->{set}{parse_headers};
    return () unless $self->{head_set};
    return ($bytes =~ /\A$TOKEN:/ ? 1 : 0, $self->head_fields);
}

# The head as set so far, as the fields a script would print: the output reads them by the same
# rules (a Location without a Status redirects, no CR or LF in a value)
# (A handler module's head has a status always, and a Content-Type only when one was set.) As
# Apache's header filter: content_type replaces a Content-Type in headers_out, and no_cache
# adds an Expires of now unless headers_out has one.
sub head_fields ($self) {
    my @lang = @{$self->{content_languages} // []};
    my $own  = $self->{module};
    my @out  = $self->{headers_out} ? $self->{headers_out}->pairs : ();
    @out = _without('content-type', @out) if @out && defined $self->{content_type};
    return (
        (defined $self->{status} || $own ? (Status => $self->{status} // 200) : ()),
        (   defined $self->{content_type}
                || !$own ? ('Content-Type' => $self->{content_type} // 'text/html')
            : ()
        ),
        (   defined $self->{content_encoding} ? ('Content-Encoding' => $self->{content_encoding})
            : ()
        ),
        (@lang             ? ('Content-Language' => join ', ', @lang) : ()),
        ($self->{no_cache} ? _no_cache_fields($self->{headers_out})   : ()),
        @out,
        ($self->{err_headers_out} ? $self->{err_headers_out}->pairs : ())
    );
}

sub _no_cache_fields ($out) {
    return (
        Pragma          => 'no-cache',
        'Cache-Control' => 'no-cache',
        ($out && defined $out->get('Expires') ? () : (Expires => HTTP::Date::time2str(time))),
    );
}

# Name-value pairs less those of one (lower-case) name
sub _without ($name, @pairs) {
    return
        map { lc $pairs[$_] eq $name ? () : @pairs[$_, $_ + 1] } grep { $_ % 2 == 0 } 0 .. $#pairs;
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Response - the response methods of mod_perl's $r

=head1 SYNOPSIS

    $r->update_mtime((stat $file)[9]);
    $r->set_last_modified;
    $r->set_etag;
    if ((my $rc = $r->meets_conditions) != Apache2::Const::OK) { $r->status($rc); return }
    $r->custom_response(403, 'Come back tomorrow');
    $r->internal_redirect('/other/page');

=head1 DESCRIPTION

C<custom_response>, C<make_etag>, C<meets_conditions>, C<mtime>, C<no_cache>,
C<send_cgi_header>, C<send_http_header> (mod_perl 1), C<set_content_length>, C<set_etag>,
C<set_last_modified>, C<update_mtime> (Apache2::Response) and C<internal_redirect>
(Apache2::SubRequest). See L<Perennial::ModPerl> for how a head set here meets a printed one.

=cut
