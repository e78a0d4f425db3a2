package Perennial::Executor::Resolver;
use v5.36;
use Cwd         qw(realpath);
use Time::HiRes ();
use Perennial::Twins;

# A URL path under a script location -> the script file, its SCRIPT_NAME and PATH_INFO.
# Only regular files inside the directory: '.', '..', encoded slashes, NUL bytes and symlinks
# that leave the tree are answered 404, as if nothing were there. One stat() per request when
# the file is checked every time; none when the policy says never.

my $MAX_KNOWN = 10_000;    # URLs a finder keeps

# A known file's look on each request: in C (xs/Resolver.xs), or its Perl twin below
Perennial::Twins::install(__PACKAGE__, 'restat');

sub new ($class, %args) {
    my $real = realpath($args{root}) // die "Can't find script directory \"$args{root}\": $!\n";
    die "Script directory \"$args{root}\" is not a directory\n" unless -d $real;

    # Paths are built from the root as configured (a symlinked root keeps its name, as in
    # Apache); the real path only bounds where symlinks may lead
    my $root  = $args{root} =~ s{/+\z}{}r;
    my $check = $args{check} // 'always';
    return bless {
        root        => $root,
        real_root   => $real,
        check       => $check,
        seconds     => $check =~ /\A\d+\z/ ? $check : 0,
        cache       => {},
        real        => {},
        directories => $args{directories} // 0,
        symlinks    => $args{symlinks},
        script_url  => $args{script_url},
        context     => $args{context},
    }, $class;
}

# Returns {file, script_name, path_info, mtime, ctime, size, mode} or an HTTP status. The path is
# PATH_INFO below SCRIPT_NAME unless the caller says which path below which base.
sub resolve ($self, $env, $path = $env->{PATH_INFO} // '', $base = $env->{SCRIPT_NAME} // '') {

    # Checked before the cache: the decoded path may hide what the raw one says (a NUL byte, or
    # an encoded slash, NUL or backslash in the path of the URI as the client wrote it; the
    # query string holds what it likes: a form's field with a URL in it)
    my $uri = $env->{REQUEST_URI} // '';
    return 404
        if index($path, "\0") >= 0
        || index($uri,  '%') >= 0 && $uri =~ m{\A[^?]*?(?:%2f|%00|%5c)}i;

    # A known URL: trusted for ever, for a while, after one stat() shows the same file, or
    # while the worker's watch saw nothing change since that stat (a request whose wait looked
    # at the watch, Perennial::FileWatch; a script's file, which the dispatcher marks to be
    # watched, and the watches made before the stat). Here, not in a method of its own: its
    # call was 2k instructions a request.
    if (my $known = $self->{cache}{$path}) {
        my $seconds = $self->{seconds};
        return $known
            if $self->{check} eq 'never' || ($seconds && $known->{until} > Time::HiRes::time());
        my $files = $env->{'perennial.files'};
        if ($files && ($known->{seen} // 0) == $files->{changes}) {    # Never seen when timed
            $known->{stamp} = ++$self->{stamps};    # Which look: libraries are looked at with it
            return $known;
        }

        # A request not served on trust (no watch with it) keeps what the watch knew: the same
        # file, and the watch's count unchanged, is still the file watched since then
        my $seen
            = !$files                      ? $known->{seen}
            : $known->{watch} && !$seconds ? $files->watched($known)
            :                                0;
        if (restat($known)) {
            $known->{stamp} = ++$self->{stamps};
            $known->{until} = Time::HiRes::time() + $seconds if $seconds;
            $known->{seen}  = $seen;
            return $known;
        }
        delete $self->{cache}{$path};
    }
    return $self->_known($path, $self->_walk($path, $base));
}

# A file found is known by its URL path from now on; a status or a directory is not
sub _known ($self, $path, $hit) {
    return $hit unless ref $hit && $hit->{file};

    # Any PATH_INFO below a script is a URL of its own: the cache must not grow without end
    %{$self->{cache}} = () if keys %{$self->{cache}} >= $MAX_KNOWN;
    $self->{cache}{$path} = $hit;
    return $hit;
}

# One segment at a time until a regular file: the rest of the path is its PATH_INFO
sub _walk ($self, $path, $base) {
    my @parts = split m{/}, $path =~ s{\A/}{}r, -1;
    my $file  = $self->{root};
    while (@parts) {
        my $part = shift @parts;

        # A trailing slash after a directory names the directory itself
        last       if $part eq '' && !@parts;
        return 404 if $part =~ /\A\.{0,2}\z/;
        my $in = $file;
        $file .= "/$part";
        my $st = $self->_stat($in, $file);
        return $st unless ref $st;
        next if -d _;
        return 404 unless -f _ && ($self->{symlinks} || $self->_inside($file, $st->[1]));
        return 404 if grep {/\A\.\.?\z/} @parts;    # Nor in its PATH_INFO
        return $self->_hit($file, $st, @parts ? '/' . join('/', @parts) : '', $base, $path);
    }
    return $self->{directories} ? _directory($file, $path =~ m{/\z} ? 1 : 0) : 404;
}

# One segment's stat, through a symlink when the policy allows it (leaves _ on what it found);
# Time::HiRes' stat, for the modification time to the microsecond (static files' ETags)
sub _stat ($self, $in, $file) {
    my @st = Time::HiRes::lstat($file) or return 404;
    return \@st unless -l _;
    my $owner = $st[4];
    @st = Time::HiRes::stat($file) or return 404;
    return $self->_link_allowed($in, $file, $owner, $st[4]) ? \@st : 403;
}

sub _hit ($self, $file, $st, $rest, $base, $path) {
    my ($dir, $name) = $file =~ m{\A(.*)/([^/]*)\z};
    my $hit = {
        dir         => $dir,
        nph         => $name =~ /\Anph-/ ? 1 : 0,
        file        => $file,
        path_info   => $rest,
        mtime       => $st->[9],
        ctime       => $st->[10],
        size        => $st->[7],
        mode        => $st->[2],
        stamp       => ++$self->{stamps},
        seconds     => $self->{seconds},             # Its libraries are looked at as often
        ino         => $st->[1],
        script_name => defined $self->{script_url}
        ? _less_tail($self->{script_url}, $rest)
        : $base . substr($path, 0, length($path) - length $rest),
        context => $self->{context}    # [CONTEXT_PREFIX, CONTEXT_DOCUMENT_ROOT], or none
    };
    $hit->{until} = Time::HiRes::time() + $self->{seconds} if $self->{seconds};
    return $hit;
}

# A URL whose file an AliasMatch named: SCRIPT_NAME is the URL less the PATH_INFO at its end
sub _less_tail ($url, $tail) {
    return $url
        unless length $tail
        && length $url > length $tail
        && substr($url, -length $tail) eq $tail;
    return substr $url, 0, length($url) - length $tail;
}

# A directory named by the URL, for those who serve directories (no cache: it is rare)
sub _directory ($dir, $slash) {
    return {directory => $dir, slash => $slash};
}

# Whether a hit's file is still a regular file with the same inode (the same file, or one
# written again in place); if so, its mtime, ctime, size and mode as they are now go into the hit
sub pp_restat ($hit) {
    my @st = Time::HiRes::stat($hit->{file});
    return 0 unless @st && -f _ && $st[1] == $hit->{ino};
    @$hit{qw(mtime ctime size mode)} = @st[9, 10, 7, 2];
    return 1;
}

# Options FollowSymLinks follows a link wherever it leads, SymLinksIfOwnerMatch only when the
# link and what it points to have one owner, neither refuses it; the options are those of the
# directory that holds the link. Without that policy, links may not leave the tree.
sub _link_allowed ($self, $in, $link, $owner, $target_owner) {
    my $policy = $self->{symlinks} or return 1;
    my $how    = $policy->($in);
    return 1 if $how eq 'follow';
    return 1 if $how eq 'owner' && $target_owner == $owner;
    $self->{why} = "Symbolic link not allowed or link target not accessible: $link";
    return 0;
}

# Why the last 403 was given
sub why ($self) { $self->{why} }

# Symlinks may point anywhere inside the tree, never outside it (checked once per inode)
sub _inside ($self, $file, $ino) {
    my $known = $self->{real}{$file};
    return $known->[1] if $known && $known->[0] == $ino;
    my $real = realpath($file) // '';
    my $ok   = index($real, "$self->{real_root}/") == 0 ? 1 : 0;
    $self->{real}{$file} = [$ino, $ok];
    return $ok;
}

1;

__END__

=head1 NAME

Perennial::Executor::Resolver - find the script a URL names, safely

=head1 SYNOPSIS

    my $resolver = Perennial::Executor::Resolver->new(root => '/srv/cgi-bin', check => 'always');
    my $hit = $resolver->resolve($env);    # or 404
    say "$hit->{file} $hit->{script_name} $hit->{path_info}";

=head1 DESCRIPTION

Walks the URL path below the location, one segment at a time, until it meets a regular file:
that is the script, and the rest of the path is PATH_INFO (C</cgi-bin/app.pl/a/b> runs
C<app.pl> with PATH_INFO C</a/b>). Directories, missing files, C<.> and C<..> segments, NUL
bytes, encoded slashes or backslashes, and symlinks that resolve outside the directory all
give 404. Results are cached per worker: C<check =E<gt> 'always'> stats the script on every
request (to see changes, as mod_perl does), a number of seconds stats at most that often, and
C<'never'> makes no system call at all once a URL is known.

=head1 METHODS

=head2 new

    my $resolver = Perennial::Executor::Resolver->new(root => $dir, check => 'always' | 'never' | $seconds);

With C<< symlinks => sub ($dir) { 'follow' | 'owner' | 'none' } >>, a symlink is followed
wherever it leads, only when the link and its target have the same owner, or refused with 403
(C<why> says which link), by what the policy says of the directory holding it; without it, a
symlink may lead anywhere inside the directory and nowhere else (404).

With C<< directories => 1 >>, a URL that names a directory gives C<{directory, slash}> (slash:
whether the URL ended with one) instead of 404.

With C<< script_url => $url >> (the root an C<AliasMatch> made for one URL), C<script_name> is
that URL less the C<PATH_INFO> found at its end, as Apache computes it, whatever the path
below the root is called.

With C<< context => [$prefix, $dir] >> (the Alias that leads to the root, as written, or C<''>
and the DocumentRoot), each hit carries it as C<context>: a script's C<CONTEXT_PREFIX> and
C<CONTEXT_DOCUMENT_ROOT>.

=head2 resolve

    my $hit = $resolver->resolve($env);
    my $hit = $resolver->resolve($env, $path_below_root, $script_name_of_root);

Returns C<{file, script_name, path_info, mtime, ctime, size, mode}> or 404 (403 for a symlink the
policy refuses). The path is the request's C<PATH_INFO> below its C<SCRIPT_NAME>, unless the
caller names both (the dispatcher, which has translated the URL to a root already).

=head2 why

    my $reason = $resolver->why;    # after a 403

=cut
