package Perennial::Redirect;
use v5.36;
use Perennial::ErrorPage;

# mod_alias's Redirect and RedirectMatch, checked before any file is looked for: the first
# that matches, in the order written, answers with its status and Location

my %STATUS = (permanent => 301, temp => 302, seeother => 303, gone => 410);

# One directive's words into a redirect, or the reason they are wrong. $path is the
# <Location> it stands in, for the one-argument form (the location itself moves).
sub parse ($class, $name, $args, $path = undef) {
    my @args   = @$args;
    my $status = 302;
    $status = 301 if lc $name eq 'redirectpermanent';
    $status = 302 if lc $name eq 'redirecttemp';
    if (   @args
        && lc($name) =~ /\Aredirect(?:match)?\z/
        && ($STATUS{lc $args[0]} || $args[0] =~ /\A\d{3}\z/))
    {
        my $word = shift @args;
        $status = $STATUS{lc $word} // $word;
    }
    my $to_gone = $status < 300 || $status > 399;    # gone (410) and any other non-redirect
    my $want    = $to_gone ? 1 : 2;
    if (defined $path && @args == $want - 1) {
        unshift @args, $path;
        my $r = $class->_one($name, $status, \@args);
        return ref $r ? {%$r, exact => 1} : $r;
    }
    return
          "$name takes "
        . ($want == 2             ? 'a URL path and a URL'       : 'a URL path')
        . (lc $name eq 'redirect' ? ', after an optional status' : '')
        if @args != $want;
    return $class->_one($name, $status, \@args);
}

sub _one ($class, $name, $status, $args) {
    my ($from, $to) = @$args;
    return "$name: the URL to send to must be absolute or start with /"
        if defined $to && $to !~ m{\A(?:\w+://|/)};
    if (lc $name eq 'redirectmatch') {
        my $re = eval {qr/$from/} or return "RedirectMatch: bad regular expression '$from'";
        return {re => $re, status => $status, to => $to};
    }
    return "$name: the URL path must start with /" if $from !~ m{\A/};
    return {from => $from =~ s{/+\z}{}r, status => $status, to => $to};
}

# The response for the first redirect that matches the request, or nothing
sub find ($class, $list, $env) {
    my ($r, $to) = _first($list, $env->{PATH_INFO}) or return;
    $to .= "?$env->{QUERY_STRING}"
        if defined $to && length($env->{QUERY_STRING} // '') && !$r->{re} && $to !~ /\?/;
    return _response($r->{status}, $to, $env);
}

# Whether a redirect of the list moves this URL path: which one does depends on the path alone
# (a plan of Perennial::Dispatch, made for one path, asks it once)
sub applies ($class, $list, $url) {
    my ($r) = _first($list, $url);
    return $r ? 1 : 0;
}

# The first redirect that matches a URL path, in the order written, and where it sends it
sub _first ($list, $url) {
    for my $r (@$list) {
        if ($r->{re}) {
            $url =~ $r->{re} or next;
            return ($r, _captured($r->{to}, $url));
        }
        return ($r, $r->{to}) if $r->{exact};
        my $p = $r->{from};
        next
            unless index($url, $p) == 0
            && (length $url == length $p || substr($url, length $p, 1) eq '/');
        return ($r, undef) unless defined $r->{to};

        # The rest of the path after the target: its own slash, not a second one (/old/x to
        # /new/ is /new/x); the target as written when nothing is left (/old to /new/ is
        # /new/, as mod_alias sends it)
        my $rest = substr $url, length $p;
        return ($r, length $rest ? ($r->{to} =~ s{/+\z}{}r) . escape_path($rest) : $r->{to});
    }
    return;
}

# A RedirectMatch's target with $0 to $9 of the match just made, each made fit for a URL
# ($N of no group: empty), as Apache's ap_pregsub_escape: pregsub's rules, escaped groups
sub _captured ($to, $url) {
    return unless defined $to;
    return pregsub($to, [map { escape_path($_) } groups($url)]);
}

# What the match just made on $string caught: the whole match, then each group ('' for a group
# that took no part). RedirectMatch and AliasMatch substitute them.
sub groups ($string) {
    return map { defined $-[$_] ? substr $string, $-[$_], $+[$_] - $-[$_] : '' } 0 .. $#-;
}

# Apache 2.4's ap_pregsub: $0 to $9 are what the match caught (@$m, as groups gives them), a
# backslash takes the character after it as it is (\$1 is "$1"), and anything else, & too,
# is itself
sub pregsub ($template, $m) {
    return $template =~ s/\$(\d)|\\(.)/defined $1 ? $m->[$1] \/\/ '' : $2/gesr;
}

sub _response ($status, $to, $env) {
    return Perennial::ErrorPage->response($status, $env) unless defined $to;    # gone, or not 3xx
    return Perennial::ErrorPage->response($status, $env, Location => $to);
}

# A decoded URL path made fit for a Location header again: what is not a URL character is
# %-encoded (a CR or LF among them, so no header can be slipped in)
sub escape_path ($path) {
    return $path =~ s{([^A-Za-z0-9\-._~/?=&%+:@!\$'()*,;])}{sprintf '%%%02X', ord $1}ger;
}

1;

__END__

=head1 NAME

Perennial::Redirect - mod_alias's Redirect and RedirectMatch

=head1 SYNOPSIS

    my $r   = Perennial::Redirect->parse(Redirect => ['permanent', '/old', 'https://example.org/new']);
    my $res = Perennial::Redirect->find([$r], $env);    # undef: no redirect matches

=head1 DESCRIPTION

C<Redirect [status] URL-path URL> sends C<URL-path> and everything below it (on whole
segments) to URL with the rest of the path and the query string appended (URL's trailing slash
kept when no path is left, not doubled when some is); status is
C<permanent> (301), C<temp> (302, the default), C<seeother> (303), C<gone> (410, no URL) or a
number. C<RedirectMatch [status] regex URL> uses C<$1>..C<$9> from the regex.
C<RedirectPermanent> and C<RedirectTemp> are 301 and 302. What is taken from the request
(the rest of the path, a capture) is %-encoded again before it goes into C<Location>. Inside a C<< <Location> >> the
one-argument form C<Redirect [status] URL> sends the location itself there. They are
checked in the order written, the host's before the main server's, before any file is looked
for.

=head1 METHODS

=head2 parse

    my $redirect_or_error = Perennial::Redirect->parse($directive, \@args, $location_path);

=head2 escape_path

    my $url_part = Perennial::Redirect::escape_path($decoded_path);

=head2 find

    my $res = Perennial::Redirect->find(\@redirects, $env);

=head2 groups

    $url =~ $re and my @m = Perennial::Redirect::groups($url);    # $0, $1 ...

What the match just made caught, as C<$0> to C<$9> of a C<RedirectMatch> or C<AliasMatch>
target take them.

=cut
