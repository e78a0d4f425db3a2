package Perennial::Dispatch::Answers;
use v5.36;
use Exporter qw(import);
use Perennial::ErrorPage;

our @EXPORT_OK = qw(encoded missing no_handler no_index refused trace_echo);

# The answers the dispatcher makes itself, each with its log line, as Apache's core and
# modules answer and log the same requests: a refusal (an encoded slash or NUL, a file no
# user may have, a handler Perennial does not have, a directory with no index), a file that is
# not there, and TRACE's echo. Each takes the error log (or undef: none is written), the
# request's environment and what the refusal is about, and returns the PSGI response.

# An encoded slash or NUL in the URL path (AllowEncodedSlashes Off): 404, a warn line
sub encoded ($log, $env, $what) {
    $log->warn("URL path with an encoded $what refused: $env->{REQUEST_METHOD} "
            . "$env->{REQUEST_URI} (client "
            . ($env->{REMOTE_ADDR} // 'unix socket')
            . '): 404')
        if $log;
    return Perennial::ErrorPage->response(404, $env);
}

# No file at the URL (404: an info line, as Apache's), or another status the search found
sub missing ($log, $env, $status) {
    $log->info("File does not exist: $env->{PATH_INFO} (request $env->{REQUEST_METHOD} "
            . "$env->{REQUEST_URI})")
        if $log && $status == 404;
    return Perennial::ErrorPage->response($status, $env);
}

# A handler Perennial does not have (AddHandler type-map, a PHP handler ...): never the file's
# source as text, as Apache would not send it either
sub no_handler ($log, $env, $handler, $hit) {
    my $why
        = $handler =~ /\A(?:perl-script|modperl)\z/
        ? "handler $handler has no PerlResponseHandler here"
        : "handler '$handler' is not one Perennial has";
    $log->error("$why, for $hit->{file} (request $env->{REQUEST_METHOD} $env->{REQUEST_URI})")
        if $log;
    return Perennial::ErrorPage->response(500, $env);
}

# A file the search refused ({status, why}: a symlink out of its tree, a file not readable)
sub refused ($log, $env, $hit) {
    $log->error("$hit->{why} (request $env->{REQUEST_METHOD} $env->{REQUEST_URI})") if $log;
    return Perennial::ErrorPage->response($hit->{status}, $env);
}

# A directory with no DirectoryIndex file, as Apache's handler for it answers: mod_cgi refuses
# to run it (403), ModPerl::Registry and PerlRun decline it and the core's default handler has
# no file to send (404), and mod_autoindex makes no listing without Options Indexes (403;
# Perennial makes none with it either)
sub no_index ($log, $env, $plan, $hit, $names) {
    my $dir     = "$hit->{directory}/";
    my $request = "(request $env->{REQUEST_METHOD} $env->{REQUEST_URI})";
    if ($plan->{kind} eq 'script' && $plan->{handler} eq 'cgi-script') {
        $log->error("attempt to invoke directory as script: $dir $request") if $log;
        return Perennial::ErrorPage->response(403, $env);
    }
    if ($plan->{kind} eq 'script') {
        $log->info("Attempt to serve directory: $dir $request") if $log;
        return Perennial::ErrorPage->response(404, $env);
    }
    my $set = $plan->{set};
    my $why
        = $set->{options}{Indexes}
        ? 'Perennial makes no directory listings (Options Indexes)'
        : 'server-generated directory index forbidden by Options directive';
    $log->error("Cannot serve directory $dir: No matching DirectoryIndex ("
            . join(',', @$names)
            . ") found, and $why")
        if $log;
    return Perennial::ErrorPage->response(403, $env);
}

# TraceEnable On: Apache's core answers a TRACE itself, before access rules and before any
# handler (a script, a handler module, a file, or nothing at all: none of them runs), with the
# request's head as the client sent it, lines ended by CRLF, as message/http (the head holds
# nothing the client did not send). One with a body is refused, as Apache's (TraceEnable
# extended is not taken).
sub trace_echo ($log, $env) {
    if ($env->{CONTENT_LENGTH} || defined $env->{HTTP_TRANSFER_ENCODING}) {
        $log->info("TRACE with a request body refused: $env->{REQUEST_URI}") if $log;
        return Perennial::ErrorPage->response(413, $env);
    }
    my $head = $env->{'perennial.head'}
        // "TRACE $env->{REQUEST_URI} " . ($env->{SERVER_PROTOCOL} // 'HTTP/1.0') . "\n\n";
    return [200, ['Content-Type' => 'message/http'], [$head =~ s/\r?\n/\r\n/gr]];
}

1;

__END__

=head1 NAME

Perennial::Dispatch::Answers - the answers the dispatcher makes itself, with their log lines

=head1 SYNOPSIS

    use Perennial::Dispatch::Answers qw(missing no_index);
    return missing($log, $env, 404);
    return no_index($log, $env, $plan, $hit, \@names);

=head1 DESCRIPTION

Each function writes its line to the error log given (none when it is undef) and returns the
PSGI response: Perennial's page for the status (Perennial::ErrorPage), or TRACE's echo.

=head1 FUNCTIONS

=head2 encoded

    my $res = encoded($log, $env, 'slash');    # or 'NUL'

404 for a URL path with an encoded slash or NUL, as Apache's C<AllowEncodedSlashes Off>; a
warn line with the client.

=head2 missing

    my $res = missing($log, $env, $status);

The status's page; for 404, an info line C<File does not exist>, as Apache's.

=head2 no_handler

    my $res = no_handler($log, $env, $handler, $hit);

500 for a file whose handler Perennial does not have (or C<perl-script> with no
C<PerlResponseHandler>): the file's source is never sent.

=head2 no_index

    my $res = no_index($log, $env, $plan, $hit, \@names);

A directory with no C<DirectoryIndex> file: 403 under C<cgi-script> (mod_cgi's "attempt to
invoke directory as script"), 404 under ModPerl::Registry or PerlRun (Apache's core, an info
line), else 403 as mod_autoindex without C<Options Indexes> (Perennial makes no listings),
its log line naming the DirectoryIndex names that were tried.

=head2 refused

    my $res = refused($log, $env, $hit);

The status the file search refused with (C<< $hit->{status} >>), and its reason
(C<< $hit->{why} >>) in an error line.

=head2 trace_echo

    my $res = trace_echo($log, $env);

TRACE's echo of the request head as C<message/http>, or 413 for a TRACE with a body.

=head1 SEE ALSO

L<Perennial::Dispatch>, L<Perennial::ErrorPage>.

=cut
