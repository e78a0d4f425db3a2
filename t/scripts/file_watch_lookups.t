use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(scratch_dir write_file);
use Perennial::FileWatch;
use Perennial::Mounts;

# The worker's file watch in process: which directories a path is looked up in (through each
# symbolic link, as the kernel follows them), which filesystems are trusted, and which reported
# changes count.

my $dir = scratch_dir();
write_file("$dir/releases/5/cgi/x.pl", "1;\n");
mkdir "$dir/alt";
symlink 'releases/5',        "$dir/current"  or die;
symlink "$dir/current",      "$dir/alt/site" or die;    # A link to a link
symlink '../releases/5/cgi', "$dir/alt/cgi"  or die;    # Relative, with ..
symlink 'loop',              "$dir/alt/loop" or die;

subtest 'lookups' => sub {
    my ($lookups, $file) = Perennial::FileWatch::lookups("$dir/current/cgi/x.pl");
    is $file, "$dir/releases/5/cgi/x.pl", 'ends at the real file';
    my %dirs = map { ("$_->[0] $_->[1]" => 1) } @$lookups;
    ok $dirs{"$dir current"},             'the link looked up in its directory';
    ok $dirs{"$dir releases"},            'its target looked up from there';
    ok $dirs{"$dir/releases/5 cgi"},      'the rest in the real directories';
    ok $dirs{"$dir/releases/5/cgi x.pl"}, 'the file in its own';

    ($lookups, $file) = Perennial::FileWatch::lookups("$dir/alt/site/cgi/x.pl");
    is $file, "$dir/releases/5/cgi/x.pl", 'a link to a link';
    %dirs = map { ("$_->[0] $_->[1]" => 1) } @$lookups;
    ok $dirs{"$dir/alt site"} && $dirs{"$dir current"}, 'both links looked up';

    ($lookups, $file) = Perennial::FileWatch::lookups("$dir/alt/cgi/x.pl");
    is $file, "$dir/releases/5/cgi/x.pl", 'a relative link with ..';
    %dirs = map { ("$_->[0] $_->[1]" => 1) } @$lookups;
    ok $dirs{"$dir/alt .."}, 'its .. looked up where the link is';

    is_deeply [Perennial::FileWatch::lookups("$dir/alt/loop/x")], [], 'a loop: nothing';
    is_deeply [Perennial::FileWatch::lookups('relative/x.pl')],   [], 'a relative path: nothing';
};

subtest 'filesystems' => sub {
    my $info = write_file("$dir/mountinfo", <<'INFO');
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:5 / /srv/nfs rw - nfs4 server:/export rw
24 22 0:6 / /srv/My\040Site rw - tmpfs tmpfs rw
25 23 8:1 /srv /mnt/bound rw - ext4 /dev/sda1 rw
INFO
    is_deeply Perennial::Mounts::types($info), {'8:1' => 'ext4', '0:5' => 'nfs4', '0:6' => 'tmpfs'},
        'each device\'s type, a bind mount\'s too';

    # The scratch directory's own device, as each type
    my $here = Perennial::Mounts::types();
    my ($id) = grep { Perennial::Mounts::type_of($dir, {$_ => 'found'}) eq 'found' } keys %$here;
    ok $id, 'the scratch directory\'s device is in this machine\'s mount table';
    my $as
        = sub ($type) { Perennial::FileWatch::reported("$dir/releases/5/cgi/x.pl", {$id => $type}) };
    ok $as->('ext4'),                                                   'ext4 is trusted';
    ok $as->('xfs'),                                                    'xfs too';
    ok !$as->('nfs4'),                                                  'NFS is not';
    ok !$as->('zfs'),                                                   'nor ZFS';
    ok !$as->('overlay'),                                               'nor overlay';
    ok !Perennial::FileWatch::reported("$dir/releases/5/cgi/x.pl", {}), 'nor a device not listed';
};

subtest 'what counts as a change' => sub {
    plan skip_all => 'the scratch directory is on a filesystem the watch does not trust'
        unless Perennial::FileWatch::reported("$dir/releases/5/cgi/x.pl");
    my $watch = Perennial::FileWatch->new;
    ok $watch->fd > 2,                         'an inotify instance of its own';
    ok $watch->watch("$dir/current/cgi/x.pl"), 'watched';
    is $watch->notice, 0, 'nothing yet';

    write_file("$dir/releases/5/cgi/other.txt", "x\n");
    write_file("$dir/releases/notes.txt",       "x\n");
    is $watch->notice,  0, 'other names in the watched directories do not count';
    is $watch->changes, 1, 'the count stays';

    open(my $fh, '>>', "$dir/releases/5/cgi/x.pl") or die;
    print {$fh} "2;\n";
    close $fh;
    is $watch->notice,  1, 'the file written counts';
    is $watch->changes, 2, 'counted';

    symlink 'releases/6', "$dir/current.new" or die;
    rename "$dir/current.new", "$dir/current" or die;
    is $watch->notice, 1, 'the link on its path swapped counts';

    # Thousands of events that do not count, then one that does: all are read
    symlink 'releases/5', "$dir/current.new" or die;
    rename "$dir/current.new", "$dir/current" or die;
    ok $watch->watch("$dir/current/cgi/x.pl"), 'watched again';
    $watch->notice;
    write_file("$dir/releases/5/cgi/many/$_.txt",  "x\n") for 1 .. 50;
    write_file("$dir/releases/5/cgi/other-$_.txt", "x\n") for 1 .. 3000;
    utime undef, undef, "$dir/releases/5/cgi/x.pl";
    is $watch->notice, 1, 'the change behind 3,000 others counts';
    is $watch->notice, 0, 'and all were read';

    my $hit = {file => "$dir/releases/5/cgi/x.pl"};
    is $watch->watched($hit), $watch->changes, 'a hit watched since the count';
    ok !$watch->watch("$dir/releases/6/cgi/x.pl"), 'a path that leads nowhere is not watched';
    ok !$watch->watch("$dir/releases/5/cgi"),      'nor a directory';
};

done_testing;
