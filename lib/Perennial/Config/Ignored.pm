package Perennial::Config::Ignored;
use v5.36;
use Exporter qw(import);

# Directives of an Apache configuration that mean nothing to Perennial: accepted wherever
# Apache accepts them, so a site's files are read unchanged, and listed once at start with the
# reason, so nobody wonders whether they took effect.

our @EXPORT_OK = qw(ignored ignored_merge ignored_summary);

my $NO_LISTINGS  = 'Perennial makes no directory listings (mod_autoindex)';
my $NO_LANGUAGES = 'no content negotiation by language or charset (mod_negotiation, mod_mime)';
my $NO_THREADS   = 'prefork workers have no threads';
my $NO_SSI
    = 'Perennial does no server-side includes (mod_include): a file with the server-parsed '
    . 'handler is refused with 500 and the reason in the log, never sent unparsed';

# name => [why, whether Apache also takes it inside <Directory>, <Location> and <Files>]
my %WHY;

sub _ignore ($why, $in_sections, @names) {
    $WHY{$_} = [$why, $in_sections] for @names;
    return;
}

_ignore(
    $NO_LISTINGS, 1,
    qw(indexoptions indexignore indexorderdefault indexstylesheet indexheadinsert addicon
        addiconbytype addiconbyencoding addalt addaltbytype addaltbyencoding adddescription
        defaulticon headername readmename)
);
_ignore(
    $NO_LANGUAGES, 1,
    qw(addlanguage addcharset defaultlanguage languagepriority forcelanguagepriority
        removelanguage removecharset)
);
_ignore(
    $NO_THREADS, 0,
    qw(minsparethreads maxsparethreads asyncrequestworkerfactor threadlimit threadsperchild
        threadstacksize)
);
_ignore(
    $NO_SSI, 1,
    qw(ssilegacyexprparser ssierrormsg ssitimeformat ssiundefinedecho ssietag ssilastmodified
        xbithack)
);
_ignore($NO_SSI, 0, qw(ssistarttag ssiendtag));
_ignore(@$_[2, 1, 0])
    for (    # [name, taken in sections, why]
    [removetype      => 1, 'the type comes from TypesConfig and AddType'],
    [addoutputfilter => 1, 'output filters (mod_include, mod_deflate) are not applied'],
    [   addoutputfilterbytype => 1,
        'output filters (mod_deflate) are not applied: responses are sent as they are'
    ],
    [contentdigest    => 1, 'Content-MD5 is obsolete (RFC 7231)'],
    [defaulttype      => 1, 'Apache 2.4 ignores it too'],
    [enablemmap       => 1, 'Perennial chooses how it reads files'],
    [enablesendfile   => 1, 'Perennial chooses how it sends files'],
    [fileetag         => 1, 'ETags are made of size and modification time (Apache\'s default)'],
    [hostnamelookups  => 1, 'Perennial makes no DNS lookups for logs: %h is the address'],
    [usecanonicalname => 1, 'self-referential URLs are made from the Host header'],
    [usecanonicalphysicalport => 1, 'self-referential URLs are made from the Host header'],
    [acceptfilter        => 0, 'listeners always use TCP_DEFER_ACCEPT (Apache\'s "http data")'],
    [accessfilename      => 0, 'Perennial reads no .htaccess files'],
    [coredumpdirectory   => 0, 'core dumps go where the system puts them'],
    [defaultruntimedir   => 0, 'runtime files go where PidFile and ScoreBoardFile say'],
    [enableexceptionhook => 0, 'Perennial logs a dying worker itself'],
    [loadfile            => 0, 'Perennial loads no Apache modules'],
    [   loadmodule => 0,
        'Perennial loads no Apache modules; <IfModule> holds for those it has'
    ],
    [maxmemfree => 0, 'prefork workers have no allocator of Apache\'s'],
    [   mutex => 0,
        'each worker waits on its own epoll, which wakes one of them for a connection: no mutex'
    ],
    [protocols => 0, 'Perennial speaks HTTP/1.1 and 1.0'],
    [   scriptsock => 0,
        'Perennial runs CGI scripts itself, with no mod_cgid daemon and no socket'
    ],
    );

# '' when the directive is one of these (its place noted in $values), undef when it is not,
# the reason when it is one of them in a section where Apache would not take it either
sub ignored ($values, $item, $in_section = 0) {
    my $name = lc $item->{name};
    my $why  = $WHY{$name} or return;
    return "$item->{name} is not allowed inside a section (the whole server's, as in Apache)"
        if $in_section && !$why->[1];
    push @{$values->{ignored}{$item->{name}}}, "$item->{file} line $item->{line}";
    return '';
}

# A virtual host's ignored directives, into the server's list (one summary at start)
sub ignored_merge ($into, $from) {
    push @{$into->{ignored}{$_}}, @{$from->{ignored}{$_}} for keys %{$from->{ignored} // {}};
    return;
}

# One line for the log: each ignored directive once, with how often and why
sub ignored_summary ($ignored) {
    return unless $ignored && %$ignored;
    my @parts = map {
        my $n = @{$ignored->{$_}};
        "$_ (" . ($n == 1 ? $ignored->{$_}[0] : "$n lines") . "): $WHY{lc $_}[0]"
    } sort { lc $a cmp lc $b } keys %$ignored;
    return 'directives with no meaning here, accepted and ignored: ' . join('; ', @parts);
}

1;

__END__

=head1 NAME

Perennial::Config::Ignored - Apache directives Perennial accepts and ignores, and why

=head1 SYNOPSIS

    my $err = ignored(\%values, $item) // other_directive(\%values, $item);
    $log->info($_) for ignored_summary($config->ignored);

=head1 DESCRIPTION

C<LoadModule>, C<Mutex>, C<EnableSendfile>, C<HostnameLookups>, C<UseCanonicalName>,
C<FileETag>, C<AcceptFilter>, C<AccessFileName>, C<ThreadsPerChild> and the like are read
without error and listed once at start, each with the reason it has no effect. Inside
C<< <Directory> >>, C<< <Location> >> and C<< <Files> >> only those Apache takes there are
accepted (C<IndexOptions>, C<AddLanguage>, C<FileETag>, ...); the others are errors there, as in
Apache.

=head1 FUNCTIONS

=head2 ignored

    my $err = ignored(\%values, $item);    # '' if ignored, undef if not one of these
    my $err = ignored(\%values, $item, 1); # inside a section: only the per-directory ones

=head2 ignored_merge

    ignored_merge(\%values, \%host_values);

=head2 ignored_summary

    my $line = ignored_summary($config->ignored);

=cut
