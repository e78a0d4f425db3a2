package Perennial::ErrorPage;
use v5.36;
use HTTP::Status ();

# The error pages Apache's core sends when no ErrorDocument says otherwise, word for word, so
# that a site that moves gives its clients the same pages; ServerSignature and ServerAdmin as
# Apache puts them in. Set once at start (configure), read for every page.

my $MOVED = 'The document has moved <a href="%l">here</a>.';
my %TEXT  = (
    301 => $MOVED,
    302 => $MOVED,
    303 => 'The answer to your request is located <a href="%l">here</a>.',
    307 => $MOVED,
    308 => $MOVED,
    400 => 'Your browser sent a request that this server could not understand.',
    401 => "This server could not verify that you\nare authorized to access the document\n"
        . "requested.  Either you supplied the wrong\ncredentials (e.g., bad password), or your\n"
        . "browser doesn't understand how to supply\nthe credentials required.",
    403 => "You don't have permission to access this resource.",
    404 => 'The requested URL was not found on this server.',
    405 => 'The requested method %m is not allowed for this URL.',
    410 =>
        "The requested resource is no longer available on this server and there is no forwarding address.\nPlease remove all references to this resource.",
    412 => 'The precondition on the request for this URL evaluated to false.',
    416 =>
        "None of the range-specifier values in the Range\nrequest-header field overlap the current extent\nof the selected resource.",
    500 =>
        "The server encountered an internal error or\nmisconfiguration and was unable to complete\n"
        . "your request.</p>\n<p>Please contact the server administrator at \n %a"
        . " to inform them of the time this error occurred,\n and the actions you performed just before"
        . " this error.</p>\n<p>More information about this error may be available\nin the server error log.",
    503 =>
        "The server is temporarily unable to service your\nrequest due to maintenance downtime or capacity\n"
        . "problems. Please try again later.",
    504 =>
        "The gateway did not receive a timely response\nfrom the upstream server or application.",
);

my %DEFAULT = (admin => '[no address given]', signature => 'off', server => 'Perennial');
my %SITE    = %DEFAULT;

# Each generation's: what it leaves out is the default again (a ServerAdmin taken out of the
# configuration is gone after a graceful restart)
sub configure ($class, %args) {
    %SITE = (%DEFAULT, map { defined $args{$_} ? ($_ => $args{$_}) : () } keys %args);
    $SITE{signature} = lc $SITE{signature};
    return;
}

# A whole PSGI response: Apache's page for the status, for this request (a redirect's page
# links to the Location among the headers)
sub response ($class, $status, $env = {}, @headers) {
    my %h     = @headers;
    my $title = HTTP::Status::status_message($status) // 'Error';
    my $text  = $TEXT{$status}                        // '';
    $text =~ s/%m/_html($env->{REQUEST_METHOD} \/\/ 'GET')/e;
    $text =~ s/%a/_html(admin($env))/e;
    $text =~ s/%l/_html($h{Location} \/\/ '')/e;
    my $body
        = qq{<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">\n}
        . "<html><head>\n<title>$status $title</title>\n</head><body>\n<h1>$title</h1>\n"
        . (length $text ? "<p>$text</p>\n" : '')
        . _signature($env)
        . "</body></html>\n";
    return [
        $status,
        [   'Content-Type' => 'text/html; charset=iso-8859-1',
            @headers, 'Content-Length' => length $body
        ],
        [$body]
    ];
}

sub _signature ($env) {
    my $line = signature($env);
    return length $line ? "<hr>\n$line" : '';
}

# ServerSignature's line for a request (Apache's ap_psignature, which is also a CGI script's
# SERVER_SIGNATURE): empty when it is Off; the server's name and port as the client named
# them (server_of)
sub signature ($env) {
    return '' if $SITE{signature} eq 'off';
    my ($host, $port) = server_of($env);
    $host =~ s/\A\[(.*)\]\z/$1/s;    # Apache names an IPv6 host without its brackets here
    $host = _html($host);
    if ($SITE{signature} eq 'email') {
        my $admin  = admin($env);
        my $mailto = $admin =~ /\A[A-Za-z][A-Za-z0-9+.-]*:/ ? '' : 'mailto:';    # ap_is_url
        $host = qq{<a href="$mailto} . _html($admin) . qq{">$host</a>};
    }
    return "<address>$SITE{server} Server at $host Port $port</address>\n";
}

# The server's name and port as the client named them, as Apache's with UseCanonicalName Off
# (a script's SERVER_NAME and SERVER_PORT): Host's name in lower case (an IPv6 address in
# brackets), and its port, else the ServerName's (perennial.server_port), else the scheme's;
# without Host, ServerName (perennial.server_name), else the listener's address
sub server_of ($env) {
    my ($host, $port);
    if (defined $env->{HTTP_HOST}) {
        ($host, $port) = $env->{HTTP_HOST} =~ /\A(\[[^\]]*\]|[^:]*)(?::(\d+))?/;
        $host = lc $host =~ s/(?<=.)\.\z//r;    # A trailing dot, as Apache
    }
    else { $host = $env->{'perennial.server_name'} // $env->{SERVER_NAME} // '' }
    $port
        = defined $port
        ? 0 + $port
        : $env->{'perennial.server_port'}
        // (($env->{'psgi.url_scheme'} // '') eq 'https' ? 443 : 80);
    return ($host, $port);
}

# Whether ServerSignature is Off (its line empty for every request)
sub signature_off () { $SITE{signature} eq 'off' }

# A virtual host's own ServerAdmin, or the main server's (a CGI script's SERVER_ADMIN)
sub admin ($env) { $env->{'perennial.admin'} // $SITE{admin} }

# Apache's ap_escape_html: & < > " as named entities (so a link with a query string reads as
# Apache's does; Status::HTML::escape also escapes ' and control bytes, which Apache leaves)
my %ENTITY = ('&' => '&amp;', '<' => '&lt;', '>' => '&gt;', '"' => '&quot;');
sub _html ($text) { $text =~ s/([<>&"])/$ENTITY{$1}/gr }

1;

__END__

=head1 NAME

Perennial::ErrorPage - Apache's own error pages

=head1 SYNOPSIS

    Perennial::ErrorPage->configure(admin => 'webmaster@example.org', signature => 'On');
    return Perennial::ErrorPage->response(404, $env);

=head1 DESCRIPTION

The HTML Apache 2.4's core sends for an error when no C<ErrorDocument> is set (403, 404, 405,
401, 500, ...) and for the redirects it makes itself (301, 302, 303, 307, 308: the page links
to the C<Location> given among the headers), in its words, as C<text/html; charset=iso-8859-1>. C<ServerSignature On> adds
the line C<Perennial Server at HOST Port PORT> in an C<address> element (C<EMail> makes it a mailto link to
C<ServerAdmin>); C<ServerAdmin> is named in the 500 page, as Apache does. Perennial's default
is C<ServerSignature Off>.

=head1 METHODS

=head2 configure

    Perennial::ErrorPage->configure(admin => $server_admin, signature => 'On|Off|EMail', server => 'Perennial');

=head2 response

    my $res = Perennial::ErrorPage->response($status, $env, @extra_headers);

=head2 admin, signature, signature_off, server_of

    my $admin = Perennial::ErrorPage::admin($env);        # [no address given] when none is set
    my $line  = Perennial::ErrorPage::signature($env);    # '' under ServerSignature Off
    my ($name, $port) = Perennial::ErrorPage::server_of($env);

The request's C<ServerAdmin> (its virtual host's, else the main server's) and C<ServerSignature>
line (C<< <address>...</address> >> and a newline, as Apache's C<ap_psignature>; under
C<EMail> the host is a C<mailto:> link to C<ServerAdmin>), which are also a CGI script's
C<SERVER_ADMIN> and C<SERVER_SIGNATURE>; C<signature_off> says whether the line is empty for
every request. C<server_of> is the server's name and port as the client named them, as
Apache's with C<UseCanonicalName Off>: the C<Host> header's name in lower case and its port,
else C<ServerName>'s port, else the scheme's (80, 443); without C<Host>, C<ServerName>, else the
listener's address.
They are a script's C<SERVER_NAME> and C<SERVER_PORT> too.

=cut
