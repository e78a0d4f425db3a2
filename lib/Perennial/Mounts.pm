package Perennial::Mounts;
use v5.36;

# Which file system a file lies on: the type /proc/self/mountinfo gives the mounts of the file's
# device (major:minor). Not the mount point that holds its path: mounts moved or propagated
# under others are not listed in the order they stack. A device mountinfo does not list (a
# Btrfs subvolume's own) has no type: callers trust it with nothing.

our @EXPORT_OK = qw(types type_of);
use Exporter qw(import);

# Each device's file system type ("8:1" => 'ext4'), as the mount table says now
sub types ($mountinfo = '/proc/self/mountinfo') {
    open(my $fh, '<', $mountinfo) or return {};
    my %type;
    while (my $line = <$fh>) {

        # ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
        my ($device, $type) = $line =~ /\A\S+ \S+ (\S+) .*? - (\S+) / or next;
        $type{$device} //= $type;
    }
    return \%type;
}

# The type of the file system a file (or directory) lies on, '' when it cannot be told
sub type_of ($path, $types = types()) {
    my $dev = (stat $path)[0] // return '';
    return $types->{join ':', _major($dev), _minor($dev)} // '';
}

# A device number's major and minor, as glibc's gnu_dev_major and gnu_dev_minor split it
sub _major ($dev) { (($dev >> 8) & 0xfff) | (($dev >> 32) & ~0xfff) }
sub _minor ($dev) { ($dev & 0xff) | (($dev >> 12) & ~0xff) }

1;

__END__

=head1 NAME

Perennial::Mounts - the file system a file lies on

=head1 SYNOPSIS

    use Perennial::Mounts qw(types type_of);
    my $type  = type_of($file);            # 'ext4', 'nfs4', ... or ''
    my $types = types();                   # read the mount table once
    my @each  = map { type_of($_, $types) } @paths;

=head1 DESCRIPTION

The type of a file's file system, from the mounts of its device in F</proc/self/mountinfo>.
Perennial::Executor::FileTimes asks it whether a file's times can be trusted, and
Perennial::FileWatch whether inotify sees every change there; each keeps its own list of the
types it trusts.

=cut
