use v5.36;
use lib 't/lib';
use Test::More;
use File::Temp qw(tempdir);

# Started as root, workers run as www-data: from a checkout www-data cannot read (root's home,
# a 0700 directory), every request would fail. The start refuses instead, saying why.
plan skip_all => 'only root gives its workers another user' if $> != 0;
plan skip_all => 'no www-data user' unless defined getpwnam 'www-data';

my $dir = tempdir(CLEANUP => 1);    # 0700
system("git ls-files | tar cf - -T - | (cd $dir && tar xf -)") == 0 or BAIL_OUT('no copy');
my $out = `cd $dir && $^X bin/perennial serve --workers 1 -l 127.0.0.1:0 examples/hello.psgi 2>&1`;
isnt $? >> 8, 0, 'not started';
like $out,
    qr{not started: workers run as user www-data, which cannot read Perennial's own modules \(\Q$dir\E/lib/Perennial\.pm\): a directory above them is closed to it},
    'and the reason, with the file';
chmod 0755, $dir;
$out
    = `cd $dir && timeout 3 $^X bin/perennial serve --workers 1 -l 127.0.0.1:0 examples/hello.psgi 2>&1`;
unlike $out, qr/not started/, 'opened to it, it starts';

done_testing;
