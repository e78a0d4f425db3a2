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

my %WHY = (
    (   map { $_ => $NO_LISTINGS }
            qw(indexoptions indexignore indexorderdefault indexstylesheet
            indexheadinsert addicon addiconbytype addiconbyencoding addalt addaltbytype
            addaltbyencoding adddescription defaulticon headername readmename)
    ),
    (   map { $_ => $NO_LANGUAGES }
            qw(addlanguage addcharset defaultlanguage languagepriority
            forcelanguagepriority removelanguage removecharset)
    ),
    (map { $_ => $NO_THREADS } qw(minsparethreads maxsparethreads asyncrequestworkerfactor)),
    (   map { $_ => $NO_SSI }
            qw(ssilegacyexprparser ssierrormsg ssitimeformat ssistarttag ssiendtag
            ssiundefinedecho ssietag ssilastmodified xbithack)
    ),
    scriptsock   => 'Perennial runs CGI scripts itself, with no mod_cgid daemon and no socket',
    browsermatch =>
        'the browser workarounds it sets (nokeepalive, downgrade-1.0) are not needed here',
    browsermatchnocase =>
        'the browser workarounds it sets (nokeepalive, downgrade-1.0) are not needed here',
    requestreadtimeout =>
        'Timeout bounds reading a request (mod_reqtimeout\'s rates are not applied yet)',
    removetype            => 'the type comes from TypesConfig and AddType',
    addoutputfilter       => 'output filters (mod_include, mod_deflate) are not applied',
    addoutputfilterbytype =>
        'output filters (mod_deflate) are not applied: responses are sent as they are',
    acceptfilter        => 'listeners always use TCP_DEFER_ACCEPT (Apache\'s "http data")',
    accessfilename      => 'Perennial reads no .htaccess files',
    contentdigest       => 'Content-MD5 is obsolete (RFC 7231)',
    coredumpdirectory   => 'core dumps go where the system puts them',
    defaultruntimedir   => 'runtime files go where PidFile and ScoreBoardFile say',
    defaulttype         => 'Apache 2.4 ignores it too',
    enableexceptionhook => 'Perennial logs a dying worker itself',
    enablemmap          => 'Perennial chooses how it reads files',
    enablesendfile      => 'Perennial chooses how it sends files',
    fileetag            => 'ETags are made of size and modification time (Apache\'s default)',
    hostnamelookups     => 'Perennial makes no DNS lookups for logs: %h is the address',
    loadfile            => 'Perennial loads no Apache modules',
    loadmodule          => 'Perennial loads no Apache modules; <IfModule> holds for those it has',
    maxmemfree          => 'prefork workers have no allocator of Apache\'s',
    mutex               => 'workers take connections from one shared epoll, with no mutex',
    protocols           => 'Perennial speaks HTTP/1.1 and 1.0',
    threadlimit         => 'prefork workers have no threads',
    threadsperchild     => 'prefork workers have no threads',
    threadstacksize     => 'prefork workers have no threads',
    usecanonicalname    => 'self-referential URLs are made from the Host header',
    usecanonicalphysicalport => 'self-referential URLs are made from the Host header',
);

# Those Apache also takes inside <Directory>, <Location> and <Files>
my %PER_DIR = map { $_ => 1 } qw(indexoptions indexignore indexorderdefault indexstylesheet
    indexheadinsert addicon addiconbytype addiconbyencoding addalt addaltbytype addaltbyencoding
    adddescription defaulticon headername readmename addlanguage addcharset defaultlanguage
    languagepriority forcelanguagepriority removelanguage removecharset browsermatch
    browsermatchnocase removetype addoutputfilter addoutputfilterbytype contentdigest defaulttype
    enablemmap enablesendfile fileetag hostnamelookups usecanonicalname usecanonicalphysicalport
    ssilegacyexprparser ssierrormsg ssitimeformat ssiundefinedecho ssietag ssilastmodified
    xbithack);

# '' when the directive is one of these (its place noted in $values), undef when it is not,
# the reason when it is one of them in a section where Apache would not take it either
sub ignored ($values, $item, $in_section = 0) {
    my $name = lc $item->{name};
    return unless $WHY{$name};
    return "$item->{name} is not allowed inside a section (the whole server's, as in Apache)"
        if $in_section && !$PER_DIR{$name};
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
        "$_ (" . ($n == 1 ? $ignored->{$_}[0] : "$n lines") . "): $WHY{lc $_}"
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
