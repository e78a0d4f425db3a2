package Perennial::Dispatch::Files;
use v5.36;
use File::Find ();
use Perennial::Executor::Resolver;
use Perennial::Redirect;

# Where a URL path leads on disk, as Apache's translate_name and map_to_storage: the first
# Alias or ScriptAlias that covers it (in the order written), else DocumentRoot; then the file
# below that root, found by one Perennial::Executor::Resolver per root and check policy, with
# the symlink policy of the <Directory> sections of each directory on the way.

my $MAX_MATCHED = 10_000;    # URLs an AliasMatch took, whose roots are kept

sub new ($class, %args) {
    my $n    = 0;
    my $self = bless {
        walk  => $args{walk},
        roots => [
            map {
                $_->{re}
                    ? {re => $_->{re}, to => $_->{dir}, script => $_->{script}, id => ++$n}
                    : {
                    url    => $_->{url} =~ s{/+\z}{}r,
                    slash  => $_->{url} =~ m{.+/\z} ? 1 : 0,
                    dir    => $_->{dir} =~ s{/+\z}{}r,
                    file   => -f $_->{dir} ? 1 : 0,
                    script => $_->{script},
                    id     => ++$n,

                    # CONTEXT_PREFIX and CONTEXT_DOCUMENT_ROOT, as Apache's mod_alias sets
                    # them: the Alias as written
                    context => [$_->{url}, $_->{dir}]
                    }
            } @{$args{aliases} // []}
        ],
        finders => {},
        matched => {},
    }, $class;
    $self->{docroot} = {
        url     => '',
        dir     => $args{document_root} =~ s{/+\z}{}r,
        script  => 0,
        id      => 0,
        context => ['', $args{document_root}]
        }
        if defined $args{document_root};
    return $self;
}

# Each Alias and ScriptAlias, and DocumentRoot (an AliasMatch has no one directory)
sub roots ($self) {
    ((grep { !$_->{re} } @{$self->{roots}}), $self->{docroot} // ())
}

# mod_alias: (root, the path below it), or nothing when no root covers the URL path
sub translate ($self, $url) {
    for my $root (@{$self->{roots}}) {
        return $self->_matched($root, $url, _substituted($root->{to}, $url))
            if $root->{re} && $url =~ $root->{re};
        my $p = $root->{url} // next;
        next unless index($url, $p) == 0;

        # Whole segments; an Alias written with a trailing slash needs it in the URL too
        next if length $url == length $p ? $root->{slash} : substr($url, length $p, 1) ne '/';
        return $self->_matched($root, $url, $root->{dir} . substr $url, length $p)
            if $root->{file};    # An Alias to a file (Debian's W3C validator has one)
        return ($root, substr $url, length $p);
    }
    return ($self->{docroot}, $url) if $self->{docroot};
    return;
}

# An AliasMatch or ScriptAliasMatch that took the URL (or an Alias to a file): the path its
# substitution makes, found from the deepest directory in it, as a root of its own for this URL
# (kept, as plans are), whose SCRIPT_NAME is the URL less the PATH_INFO found below, as Apache
# computes it
sub _matched ($self, $alias, $url, $path) {
    return if $path =~ m{(?:\A|/)\.\.?(?:/|\z)};    # Never above what the pattern names
    my $root = $self->{matched}{"$alias->{id} $url"} //= do {
        %{$self->{matched}} = () if keys %{$self->{matched}} >= $MAX_MATCHED;
        my $dir = $path =~ s{/+\z}{}r;
        $dir =~ s{/[^/]*\z}{} until $dir eq '' || -d $dir;
        {   url        => $url,
            dir        => $dir,
            script_url => $url,
            script     => $alias->{script},
            slash      => 0,
            id         => "$alias->{id}:" . ++$self->{matches},
            context    => $alias->{context},    # An Alias to a file's, as written; none for a regex
        };
    };
    return ($root, substr $path, length $root->{dir});
}

# mod_alias's substitution, ap_pregsub's: $0 to $9 are what the pattern caught
sub _substituted ($to, $url) {
    return Perennial::Redirect::pregsub($to, [Perennial::Redirect::groups($url)]);
}

# The finder of a root, for the check policy of the sections ('always', 'never', seconds); an
# AliasMatch's root keeps its own, so that they go with it. None while the root's directory is
# not there (an Alias to what a cron job makes later).
sub finder ($self, $root, $check) {
    my $finders = $root->{script_url} ? ($root->{finders} //= {}) : $self->{finders};
    my $dir     = $root->{dir} eq ''  ? '/'                       : $root->{dir};
    return $finders->{"$root->{id}|$check"} ||= do {
        return 0 unless -d $dir;
        $root->{link_checks} //= [$self->_link_checks($dir)];
        Perennial::Executor::Resolver->new(
            root        => $dir,
            check       => $check,
            directories => 1,
            script_url  => $root->{script_url},
            context     => $root->{context},  # An AliasMatch's: none, the DocumentRoot's (Apache's)
            symlinks    => sub ($d) { $self->_symlinks($d) }
        );
    };
}

# What is at $rest below $root: a file's hit, a directory, {status => 403, why} or 404
# Every file below a directory that can be a script (a .pl or .cgi file, or an executable
# one), not in a dot directory, nor a dot file, in order: what PerlPreloadScripts compiles and
# perennial doctor -c examines
sub scripts_below ($class, $top) {
    my @files;
    File::Find::find(
        {   no_chdir => 1,
            wanted   => sub {
                return $File::Find::prune = 1 if m{/\.[^/]*\z} && $_ ne $top;
                push @files, $_ if can_be_script($_);
            }
        },
        $top
    );
    my @sorted = sort @files;
    return @sorted;
}

# A plain file that can be a script: a .pl or .cgi file, or an executable one
sub can_be_script ($path) { -f $path && ($path =~ /\.(?:pl|cgi)\z/ || -x _) }

sub find ($class, $finder, $root, $rest, $env) {
    return 404 unless $finder;
    if (@{$root->{link_checks} // []} && (my $why = link_refused($root))) {
        return {status => 403, why => $why};
    }
    my $hit = $finder->resolve($env, $rest, ($env->{SCRIPT_NAME} // '') . $root->{url});
    return ref $hit || $hit != 403 ? $hit : {status => 403, why => $finder->why};
}

# The places on the way from / to a root where a symlink would be refused, as Apache's walk
# looks at them (a directory whose <Directory> sections leave FollowSymLinks off, or ask for
# SymLinksIfOwnerMatch): [path, policy] for each name in such a directory. Made once a root;
# none in the usual case (FollowSymLinks, Apache 2.4's default, all the way), when nothing is
# looked at on a request.
sub _link_checks ($self, $dir) {
    my ($path, @checks) = ('');
    for my $part (grep {length} split m{/}, $dir) {
        my $in = length $path ? $path : '/';
        $path .= "/$part";
        my $policy = $self->_symlinks($in);
        push @checks, [$path, $policy] if $policy ne 'follow';
    }
    return @checks;
}

# Why a request below a root is refused for a symlink on the way to it (looked at on each
# request, as Apache walks the path on each: a link made since counts), or undef
sub link_refused ($root) {
    for my $check (@{$root->{link_checks} // []}) {
        my ($path, $policy) = @$check;
        my @link = lstat $path or return;    # Not there: the finder says what is missing
        next unless -l _;
        my @target = stat $path;
        next if $policy eq 'owner' && @target && $target[4] == $link[4];
        return "Symbolic link not allowed or link target not accessible: $path";
    }
    return;
}

# What the <Directory> sections of a directory say of symlinks in it: not the regex ones,
# which Apache applies after its walk down the path
sub _symlinks ($self, $dir) {
    my $walk    = $self->{walk};
    my $options = $walk->merged($walk->walked($dir), [], [])->{options};
    return
          $options->{FollowSymLinks}       ? 'follow'
        : $options->{SymLinksIfOwnerMatch} ? 'owner'
        :                                    'none';
}

1;

__END__

=head1 NAME

Perennial::Dispatch::Files - where a URL path leads on disk: Alias, ScriptAlias, DocumentRoot

=head1 SYNOPSIS

    my $files = Perennial::Dispatch::Files->new(
        aliases => $config->aliases, document_root => $config->document_root, walk => $walk);
    my ($root, $rest) = $files->translate('/cgi-bin/app.pl/x') or return 404;
    my $finder = $files->finder($root, 'always');
    my $hit    = Perennial::Dispatch::Files->find($finder, $root, $rest, $env);

=head1 DESCRIPTION

Translates a URL path as mod_alias does (the first C<Alias> or C<ScriptAlias> whose URL covers
it on whole segments, in the order written; an C<Alias> written with a trailing slash needs it
in the URL; else C<DocumentRoot>), and finds the file below the root with
L<Perennial::Executor::Resolver>: a file (with C<PATH_INFO> after it), a directory, 404, or a
403 with the reason for a symlink that C<Options FollowSymLinks> or C<SymLinksIfOwnerMatch>
of its directory does not allow, on the way to the root too (looked at on each request where
such a directory is on that way).

=head1 METHODS

=head2 new, roots, translate, finder, find

=head2 link_refused

    my $why = Perennial::Dispatch::Files::link_refused($root);

Why requests below a root are refused now for a symlink on the way to it, or undef.

=head2 scripts_below, can_be_script

    my @files = Perennial::Dispatch::Files->scripts_below($dir);
    my $yes   = Perennial::Dispatch::Files::can_be_script("$dir/app.pl");

The files that can be scripts (a C<.pl> or C<.cgi> file, or an executable one) below a
directory, dot files and dot directories left out; and whether one file can be. What
C<PerlPreloadScripts> compiles and the manager makes executors for
(L<Perennial::Dispatch::Warmup>).

=cut
