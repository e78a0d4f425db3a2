package Perennial::Executor::FileTimes;
use v5.36;

# Whether a script file's text read before is still the file's, from the look the resolver took
# at it this request (a stat under PerlScriptCheck Always), without reading it again: PerlRun
# read its file on every request to compare the text, seven system calls and 4k instructions.
#
# It says so only where the file's times can be trusted to the tick: a write changes the change
# time even when it keeps the size and puts the modification time back (touch -r, cp -p, rsync
# and tar set only the latter), but
# - the times must have a fraction of a second: on a file system that keeps whole seconds (ext4
#   with 128-byte inodes, FAT's two seconds), two writes in one second leave the same times;
# - the file system must be a local one (asked once per file, for the worker's life), whose
#   times this host's kernel sets and whose stat is
#   not answered from a cache: NFS's client may give a stat from its attribute cache for up to
#   a minute where an open asks the server (close-to-open), and a network or FUSE file
#   system's times are its server's clock;
# - the text must have been read at least $RACY seconds after the change time: the kernel takes
#   file times from its coarse clock, a tick (1 to 10 ms) at a time, so a second write in the
#   tick of the first would leave the same times (git's "racy" index entries). A text read
#   sooner is read again, until it is older.
# Anything else is read again each request, as before.

our @EXPORT_OK = qw(local_times unchanged);
use Exporter          qw(import);
use Perennial::Mounts qw(type_of);

my $RACY = 0.1;

# The local file systems whose times are set by this kernel to the nanosecond (when their
# format keeps a fraction: see above)
my %LOCAL = map { $_ => 1 } qw(ext2 ext3 ext4 xfs btrfs tmpfs ramfs overlay zfs f2fs bcachefs);

# Whether the file (its text read at $script->{text_at}, its look then in $script) is as it was,
# by its look now ($hit): the same inode, size, modification and change times
sub unchanged ($script, $hit) {
    my $ctime = $hit->{ctime};
    return
           defined $ctime
        && defined $script->{ctime}
        && $ctime != int $ctime
        && $script->{ctime} < $script->{text_at} - $RACY
        && $script->{ino} == $hit->{ino}
        && $script->{ctime} == $ctime
        && $script->{mtime} == $hit->{mtime}
        && $script->{size} == $hit->{size};
}

# Whether the file lies on a local file system (%LOCAL), by its device's mounts (Perennial::Mounts)
sub local_times ($file) {
    return $LOCAL{type_of($file)} ? 1 : 0;
}

1;

__END__

=head1 NAME

Perennial::Executor::FileTimes - whether a script's text read before is still its file's

=head1 SYNOPSIS

    use Perennial::Executor::FileTimes qw(local_times unchanged);
    my $trust = local_times($file);    # once per file
    return $last if $trust && unchanged($last, $hit);    # else read the file again

=head1 DESCRIPTION

PerlRun compiles its script on every request; it reads the file again only when the
resolver's look at it this request says it may have changed. C<unchanged> compares the look
kept with the text (C<ino>, C<size>, C<mtime>, C<ctime>, and C<text_at>, when the text was
read) with the hit's; C<local_times> says whether the file's file system is one where that
comparison can be trusted (a local one: the type F</proc/self/mountinfo> gives the file's
device). The rules are in the comment at the top of the module.

=cut
