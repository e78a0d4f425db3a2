use v5.36;
use Test::More;
use File::Temp  qw(tempdir);
use Time::HiRes ();
use Perennial::Executor::Resolver;

# A known script's file looked at again on each request, in C (xs/Resolver.xs) and by its Perl
# twin (Time::HiRes' stat): the same answer, and the same mtime, ctime, size and mode written
# into the hit, for a file whose time has a fraction of a second and one whose time has none, a
# file written again in place, one replaced by another (a new inode), a symlink, a directory and
# a file that is gone. (t/http/pure_perl.t runs the scripts' tests on the Perl twin.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Resolver::xs_restat;

my $dir = tempdir(CLEANUP => 1);

sub write_file ($path, $text) {
    open(my $fh, '>', $path) or die "Can't write $path: $!\n";
    print {$fh} $text;
    close $fh or die "Can't close $path: $!\n";
}

# A hit as the resolver makes one: the inode the file had when it was found
sub hit_of ($path) {
    my @st = Time::HiRes::stat($path);
    return {file => $path, ino => $st[1] // 0, mtime => -1, size => -1, mode => -1};
}

# Both functions on copies of one hit: their answers and the hits they leave
sub both ($hit, $name) {
    my %c = %$hit;
    my %p = %$hit;
    my $c = Perennial::Executor::Resolver::xs_restat(\%c);
    my $p = Perennial::Executor::Resolver::pp_restat(\%p);
    is $c, $p, "$name: the same answer ($p)";
    is_deeply \%c, \%p, "$name: the same hit";
    cmp_ok $c{mtime}, '==', $p{mtime}, "$name: the same mtime as a number";
    is "$c{mtime}", "$p{mtime}", "$name: and as a string";
    return $c;
}

subtest 'a file whose time has a fraction of a second, and one whose time has none' => sub {
    my $frac = "$dir/frac.pl";
    write_file($frac, "print 1;\n");
    Time::HiRes::utime(1_700_000_000.123456789, 1_700_000_000.123456789, $frac)
        or die "Can't set the time of $frac: $!\n";
    my $hit = hit_of($frac);
    ok both($hit, 'fraction'), 'still there';
    my %p = %$hit;
    Perennial::Executor::Resolver::pp_restat(\%p);
    isnt int($p{mtime}), $p{mtime}, 'its time has a fraction (the file system keeps one)';

    my $whole = "$dir/whole.pl";
    write_file($whole, "print 2;\n");
    utime 1_600_000_000, 1_600_000_000, $whole or die "Can't set the time of $whole: $!\n";
    ok both(hit_of($whole), 'whole second'), 'still there';
};

subtest 'written again in place, replaced, gone' => sub {
    my $path = "$dir/edited.pl";
    write_file($path, "print 1;\n");
    my $hit = hit_of($path);
    write_file($path, "print 'longer now';\n");
    ok both($hit, 'written in place'), 'the same inode: still the file';
    my %p = %$hit;
    Perennial::Executor::Resolver::pp_restat(\%p);
    is $p{size}, length "print 'longer now';\n", 'with its new size';

    write_file("$path.new", "print 3;\n");
    rename "$path.new", $path or die "Can't rename: $!\n";
    ok !both($hit, 'replaced'), 'another inode: not the file found';

    unlink $path or die "Can't remove $path: $!\n";
    ok !both($hit, 'gone'), 'gone';
};

subtest 'a symlink, a directory, a path with a NUL' => sub {
    my $target = "$dir/target.pl";
    write_file($target, "print 4;\n");
    symlink $target, "$dir/link.pl" or die "Can't make a symlink: $!\n";
    ok both(hit_of("$dir/link.pl"), 'symlink'), 'followed to the file';

    mkdir "$dir/sub" or die "Can't make a directory: $!\n";
    ok !both(hit_of("$dir/sub"), 'directory'), 'a directory is not a script';

    my $nul = {%{hit_of($target)}, file => "$target\0.txt"};
    my @warned;
    local $SIG{__WARN__} = sub ($msg) { push @warned, $msg };
    ok !both($nul, 'NUL'), 'a path with a NUL is not looked up';
    like "@warned", qr/Invalid \\0 character/, 'perl\'s stat says why in the Perl twin';
};

done_testing;
