package Perennial::FileWatch;
use v5.36;
use Errno qw(EAGAIN);
use Linux::Inotify2;
use Perennial::Mounts ();

# What a worker knows of the files it serves without looking at them again (issue 16).
# PerlScriptCheck Always stats a script on each request, as mod_perl does; a worker with a watch
# keeps inotify watches on each such file and on every directory its path is looked up in (the
# path as written, and through each symbolic link on it), and counts the changes that reach
# them. A request on a kept-alive connection, whose wait looked at the watch too, is served
# without the stat while nothing watched changed since the file was last looked at (the
# Resolver). Files on filesystems whose changes inotify may not see (NFS, CIFS, FUSE, overlay
# ...) are not watched: they are looked at on each request, as before.

# Local filesystems, where every change to a file or directory is reported to its watches (not
# ZFS: its rollback and receive replace files without a word to inotify)
my %REPORTED  = map { $_ => 1 } qw(ext2 ext3 ext4 xfs btrfs tmpfs ramfs f2fs jfs);
my $MAX_LINKS = 40;    # Symbolic links on one path, as the kernel's ELOOP

# The file itself: its contents, its metadata (mode, owner, times, links), it moved or went
my $FILE = IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF | IN_DONT_FOLLOW;

# A directory: a name in it came, went or changed its metadata, or the directory itself did
my $DIRECTORY
    = IN_ONLYDIR | IN_DONT_FOLLOW | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
    | IN_MOVE_SELF | IN_DELETE_SELF;

# A worker's watch, with an inotify instance of its own; undef when it cannot have one (the
# user's instances, fs.inotify.max_user_instances, ran out), said in the log: the worker then
# looks at its files on each request
sub new ($class, %args) {
    my $inotify = Linux::Inotify2->new;
    if (!$inotify) {
        $args{log}->warn("worker $$ cannot watch its files (inotify: $!): it looks at them on "
                . 'each request (fs.inotify.max_user_instances)')
            if $args{log};
        return;
    }
    $inotify->blocking(0);

    # The mount table: the kernel flags its changes to each reader's poll, as inotify's events
    my $mounts;
    $mounts = undef unless open $mounts, '<', '/proc/self/mountinfo';
    return bless {
        inotify   => $inotify,
        fd        => $inotify->fileno,
        mounts    => $mounts,
        mounts_fd => $mounts ? fileno $mounts : undef,
        changes   => 1,
        names     => {},
        log       => $args{log}
    }, $class;
}

# The descriptor the worker's waits look at
sub fd ($self) { $self->{fd} }

# How many changes were seen: a file looked at when it was this is as it was while it stays
sub changes ($self) { $self->{changes} }

# Reads all the kernel reported (a read takes what fits in its buffer, and the change that
# matters may be behind thousands that do not); a change to a watched file, to a name looked up
# in a watched directory or to a directory itself counts (a name nobody looks up does not), as
# does any event lost, a watch gone or a read that failed
sub notice ($self) {
    my $changed = 0;
    while (1) {
        my $n = sysread $self->{inotify}->fh, my $buf, 65536;
        if (!$n) {
            $changed = 1 if !defined $n && $! != EAGAIN;    # Not %!: its first use copies pages
            last;
        }
        $changed = 1 if $self->_counts($buf);
    }
    $self->{changes}++ if $changed;
    return $changed;
}

# Whether the events read (struct inotify_event, one after another) hold a change that counts
sub _counts ($self, $buf) {
    my ($pos, $changed) = (0, 0);
    while ($pos + 16 <= length $buf) {
        my ($wd, $mask, $len) = unpack 'l L x4 L', substr($buf, $pos, 16);
        my $name = substr($buf, $pos + 16, $len) =~ s/\0+\z//r;
        $pos += 16 + $len;
        my $names = $self->{names}{$wd};
        delete $self->{names}{$wd} if $mask & IN_IGNORED;

        # Names as a case-insensitive directory (ext4's casefold) may match them
        next
            if $names
            && length $name
            && !$names->{fc $name}
            && !($mask & (IN_IGNORED | IN_Q_OVERFLOW));
        $changed = 1;
    }
    return $changed;
}

# A filesystem mounted, moved or unmounted somewhere: a change to every path it may be on
sub remount ($self) {
    return ++$self->{changes};
}

# The changes count a hit's file is watched since, or 0 when it cannot be watched (somewhere
# inotify is not trusted, not readable by this user, gone, or out of watches). Its path is
# looked up again only after a change (a symlink swapped on it leads to other directories),
# once for all the URLs that lead to it.
sub watched ($self, $hit) {
    my $changes = $self->{changes};
    my $done    = $self->{done}{$hit->{file}} //= [0, 0];
    @$done = ($changes, $self->watch($hit->{file})) if $done->[0] != $changes;
    return $done->[1] ? $changes : 0;
}

# Watches a regular file and the directories its path is looked up in; whether all are watched
sub watch ($self, $path) {
    my ($lookups, $file) = lookups($path) or return 0;
    return 0 unless lstat($file) && -f _;    # Not a directory another path runs through
    my $types = $self->{types};              # Read again after a change
    $self->{types} = $types = [$self->{changes}, Perennial::Mounts::types()]
        if !$types || $types->[0] != $self->{changes};
    for my $dir ($file, map { $_->[0] } @$lookups) {
        return 0 unless reported($dir, $types->[1]);
    }
    for my $lookup (@$lookups) {
        my $wd = $self->_add($lookup->[0], $DIRECTORY) // return 0;
        $self->{names}{$wd}{fc $lookup->[1]} = 1;
    }
    my $wd = $self->_add($file, $FILE) // return 0;
    $self->{names}{$wd} //= {};

    # A link swapped while the watches were made: the path may lead where nothing watches
    my ($again, $now) = lookups($path) or return 0;
    return $now eq $file && join("\0", map {@$_} @$again) eq join("\0", map {@$_} @$lookups);
}

# One watch, its descriptor; out of watches (or memory), the log says so once
sub _add ($self, $path, $mask) {
    my $watch = $self->{inotify}->watch($path, $mask);
    return $watch->{wd} if $watch;
    if (!$!{EACCES} && !$!{ENOENT} && !$!{ENOTDIR} && !$self->{said}++) {
        $self->{log}->warn("worker $$ cannot watch $path (inotify: $!): such files are looked at "
                . 'on each request (fs.inotify.max_user_watches)')
            if $self->{log};
    }
    return;
}

# The lookups of an absolute path, each [directory, name], through every symbolic link as the
# kernel follows them, and the file it ends at; nothing for a relative path or a link loop
sub lookups ($path) {
    return unless $path =~ m{\A/};
    my @todo = _parts($path);
    my ($at, $links, @lookups) = ('', 0);
    while (@todo) {
        my $name = shift @todo;
        push @lookups, [length $at ? $at : '/', $name];
        if ($name eq '..') {
            $at =~ s{/[^/]*\z}{};
            next;
        }
        my $next = "$at/$name";
        if (-l $next) {
            return if ++$links > $MAX_LINKS;
            my $to = readlink $next // return;
            unshift @todo, _parts($to);
            $at = '' if $to =~ m{\A/};
            next;
        }
        $at = $next;
    }
    return (\@lookups, length $at ? $at : '/');
}

sub _parts ($path) {
    return grep { length && $_ ne '.' } split m{/}, $path;
}

# Whether changes on the file system a path lies on all reach inotify (the mount table read
# once for many paths: Perennial::Mounts::types)
sub reported ($path, $types = Perennial::Mounts::types()) {
    return $REPORTED{Perennial::Mounts::type_of($path, $types)} ? 1 : 0;
}

1;

__END__

=head1 NAME

Perennial::FileWatch - see a worker's files change without looking at them

=head1 SYNOPSIS

    my $watch = Perennial::FileWatch->new(log => $log);    # in the worker, after it forked
    my $seen = $watch->watched($hit);                  # before the hit's stat: since when
    $watch->notice if $fd_readable;                    # $watch->fd is in the worker's waits
    return $hit if $hit->{seen} == $watch->changes;    # nothing it depends on changed

=head1 DESCRIPTION

C<PerlScriptCheck Always> (the default, as under mod_perl) looks at a script's file on each
request, to compile it again when it changed: one C<stat> a request. A worker's watch sees the
changes instead, through inotify. For each script a request resolved to (the dispatcher marks a
script's file C<watch>; static files are not watched), it watches the file
itself (written, truncated, its mode, owner or times changed, linked or unlinked, moved,
removed) and every directory its path is looked up in, as the kernel looks it up: the path as
written, and through each symbolic link on it, wherever the link leads (so that swapping
C<current -E<gt> releases/5> for C<releases/6> is seen, and a hard-linked release too). In
those directories only the names on the path count, and the directory's own moves and
attributes.

The worker's waits for a kept-alive connection's next request look at the watch's descriptor
too (xs/Loop.c), and that request carries the watch (C<perennial.files> in its environment):
the Resolver serves it the file it knew without a C<stat> while the watch's count of changes is
what it was when the file was last looked at with its watches in place. Any other request (a
new connection, one pipelined behind another, one the Perl loop waited for) looks at the file
as before, since a change may have come after the worker last read the watch.

Only filesystems whose every change reaches inotify are watched (the type of each path's device
in the mount table, L<Perennial::Mounts>): ext2/3/4, XFS, Btrfs, tmpfs,
ramfs, F2FS, JFS. A path on any other (NFS, CIFS, FUSE, overlay, 9p, ZFS, whose rollback
replaces files without an event ...), a path that
this user cannot read, or a watch that cannot be made (fs.inotify.max_user_watches) leaves its
file looked at on each request. Out of inotify instances (fs.inotify.max_user_instances, 128
a user by default), a worker has no watch and looks at every file on each request.

A filesystem mounted, moved or unmounted anywhere is a change too: the worker's mount table
(F</proc/self/mountinfo>) is in the same poll, and the kernel flags its changes to it.

Not seen: a file written through a shared memory mapping, and its change time moved by
C<chattr> (inotify reports neither; the last changes no content). Each is seen by the next
request that is not served on trust (a new connection), as by C<PerlScriptCheck> with
seconds.

=head1 FUNCTIONS

=head2 new, fd, changes, notice, remount, watched, watch

As in the synopsis. C<watch($path)> watches one file and its lookups (true when all are
watched); C<watched($hit)> does that for a hit once after each change, and returns the count
it is watched since (0 when it cannot be).

=head2 lookups, reported

    my ($lookups, $real) = Perennial::FileWatch::lookups('/srv/current/cgi-bin/x.pl');
    my $seen = Perennial::FileWatch::reported($real);    # its changes all reach inotify

=cut
