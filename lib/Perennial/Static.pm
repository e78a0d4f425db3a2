package Perennial::Static;
use v5.36;
use HTTP::Date  ();
use Time::HiRes ();
use Perennial::ErrorPage;
use Perennial::HTTP::Request qw(registered_method);
use Perennial::MimeTypes;
use Perennial::Static::Range;

# Apache core's default handler: a file from DocumentRoot or an Alias, with Last-Modified and
# an ETag (size and modification time, as Apache's default FileETag), conditional requests
# (304, 412), byte ranges (206, 416), HEAD, and the type from the MIME table. The dispatcher
# has found the file, walked the configuration and checked access before it gets here.

my $SMALL = 65_536;    # Files up to this size leave with their head in one write

sub new ($class, %args) {
    return bless {types => $args{types}, log => $args{log}}, $class;
}

# $hit: the file (file, size, mtime, mode); $set: the merged settings of its sections
sub serve ($self, $env, $hit, $set) {
    my $method = $env->{REQUEST_METHOD};

    # POST is answered as GET, as Apache's default handler answers it
    return $self->_not_get($env, $hit)       if $method !~ /\A(?:GET|HEAD|POST)\z/;
    return $self->_script_source($env, $hit) if $set->{exec_cgi} && _looks_like_script($hit);
    my ($size, $mtime) = @$hit{qw(size mtime)};
    my $etag     = etag($size, $mtime);
    my $modified = HTTP::Date::time2str(int $mtime);
    my @headers  = ('Last-Modified' => $modified, 'ETag' => $etag, 'Accept-Ranges' => 'bytes');
    my $type     = $self->{types}->type_of($hit->{file}, $set);
    push @headers, 'Content-Type' => $type if length $type;

    if ($set->{add_encoding}) {    # AddEncoding: looked at only where a section has one
        my $encoding = Perennial::MimeTypes->encoding_of($hit->{file}, $set);
        push @headers, 'Content-Encoding' => $encoding if length $encoding;
    }

    my $cond = conditions($env, $etag, int $mtime);
    return [$cond, [@headers[0 .. 3]], []]           if $cond == 304;
    return Perennial::ErrorPage->response(412, $env) if $cond == 412;
    open(my $fh, '<:raw', $hit->{file}) or do {
        $self->_log(error => "Can't open $hit->{file}: $!", $env);
        return Perennial::ErrorPage->response(403, $env);
    };
    my $range = Perennial::Static::Range->parse($env, $size, $etag, $modified);
    return _whole($fh, $size, \@headers, $method) unless $range;
    return Perennial::Static::Range->response($fh, $size, $range, \@headers, $type) if ref $range;
    return Perennial::ErrorPage->response(416, $env, "Content-Range" => "bytes */$size");
}

# OPTIONS is answered; other methods than GET and HEAD are not allowed on a file (405), and
# one HTTP does not register is not known at all (501, as Apache's default handler answers
# M_INVALID)
sub _not_get ($self, $env, $hit) {
    my $method = $env->{REQUEST_METHOD};
    return [200, ['Allow' => 'GET,HEAD,POST,OPTIONS', 'Content-Length' => 0], []]
        if $method eq 'OPTIONS';
    if (!registered_method($method)) {
        $self->_log(
            warn => "method $method is not one HTTP registers, for the file $hit->{file}",
            $env
        );
        return Perennial::ErrorPage->response(501, $env);
    }
    $self->_log(warn => "method $method not allowed for the file $hit->{file}", $env);
    return Perennial::ErrorPage->response(405, $env, 'Allow' => 'GET,HEAD,POST,OPTIONS');
}

sub _whole ($fh, $size, $headers, $method) {
    return [200, [@$headers, 'Content-Length' => $size], []] if $method eq 'HEAD';
    if ($size <= $SMALL) {
        my $content;
        my $got = read $fh, $content, $size;
        return [200, [@$headers, 'Content-Length' => length $content], [$content]] if defined $got;
    }
    return [200, [@$headers, 'Content-Length' => $size], $fh];
}

# Apache's: size and modification time in microseconds (cut, as APR cuts the nanoseconds; the
# floating-point stat can still make it one apart), weak while the file is less than a second
# old (it may change again within the same second)
sub etag ($size, $mtime) {
    my $tag = sprintf '"%x-%x"', $size, int($mtime * 1_000_000);
    return Time::HiRes::time() - $mtime < 1 ? "W/$tag" : $tag;
}

# RFC 9110's order: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since; 200, 304
# or 412 (also mod_perl's meets_conditions, where a response may have no ETag: then only *
# matches)
sub conditions ($env, $etag, $mtime) {
    return 412 unless _may_change($env, $etag, $mtime);
    if (defined(my $none = $env->{HTTP_IF_NONE_MATCH})) {
        return 200 unless _holds($none, $etag, 'weak');
        return $env->{REQUEST_METHOD} =~ /\A(?:GET|HEAD)\z/ ? 304 : 412;
    }
    my $since = _date($env->{HTTP_IF_MODIFIED_SINCE}) // return 200;
    return $mtime <= $since && $since <= time ? 304 : 200;
}

# If-Match, or else If-Unmodified-Since, lets the request go on
sub _may_change ($env, $etag, $mtime) {
    return _holds($env->{HTTP_IF_MATCH}, $etag, 0) if defined $env->{HTTP_IF_MATCH};
    my $since = _date($env->{HTTP_IF_UNMODIFIED_SINCE}) // return 1;
    return $mtime <= $since;
}

# A list of tags (or *) holds the ETag: strongly, or weakly (W/ set aside on both sides)
sub _holds ($list, $etag, $weak) {
    return 1 if $list =~ /\A\s*\*\s*\z/;
    return 0                                        unless defined $etag;
    return scalar grep { $_ eq $etag } _tags($list) unless $weak;
    my $want = $etag =~ s{\AW/}{}r;
    return scalar grep { s{\AW/}{}r eq $want } _tags($list);
}

sub _date ($text) { defined $text ? HTTP::Date::str2time($text) : undef }

sub _tags ($list) { $list =~ /((?:W\/)?"[^"]*")/g }

# A script in a directory where scripts run is never sent as text, whoever handles it
sub _looks_like_script ($hit) {
    return $hit->{file} =~ /\.(?:pl|cgi|pm|psgi|sh|py|php)\z/i
        || ($hit->{mode} // 0) & oct 111;    # Executable by anyone
}

sub _script_source ($self, $env, $hit) {
    $self->_log(
        error => "$hit->{file} is a script in a directory with Options ExecCGI and no "
            . 'handler runs it: its source is not sent (give the directory a SetHandler, or '
            . 'an AddHandler for its extension)',
        $env
    );
    return Perennial::ErrorPage->response(403, $env);
}

sub _log ($self, $level, $msg, $env) {
    $self->{log}->$level("$msg (request $env->{REQUEST_METHOD} $env->{REQUEST_URI})")
        if $self->{log};
}

1;

__END__

=head1 NAME

Perennial::Static - static files, as Apache's core serves them

=head1 SYNOPSIS

    my $static = Perennial::Static->new(types => $mime_types, log => $log);
    my $res    = $static->serve($env, {file => $path, size => $size, mtime => $mtime, mode => $mode}, $settings);

=head1 DESCRIPTION

Serves a file the dispatcher found: C<Last-Modified>, an C<ETag> of size and modification time
(Apache's default C<FileETag MTime Size>, in Apache's format), C<If-Match>,
C<If-Unmodified-Since>, C<If-None-Match> and C<If-Modified-Since> (304 or 412), C<Range> and
C<If-Range> (206, multipart for several ranges, 416), HEAD, and C<Content-Type> from
L<Perennial::MimeTypes> (C<ForceType>, C<AddType>, then the C<TypesConfig> table; none when
the type is unknown, as Apache 2.4). Files up to 64 KB leave with the head in one write; larger
ones by sendfile(2) (L<Perennial::HTTP::Sendfile>). OPTIONS is answered with C<Allow>, other methods but GET and
HEAD with 405. In a directory with C<Options ExecCGI>, a file that looks like a script (an
executable file, or .pl, .cgi, .pm, .psgi, .sh, .py, .php) is refused with 403 and a log line
rather than sent as text.

=head1 METHODS

=head2 new

    my $static = Perennial::Static->new(types => $types, log => $log);

=head2 serve

    my $res = $static->serve($env, $hit, $settings);

=cut
