use v5.36;
use Test::More;
use File::Find qw(find);

# The code stays as STYLE.md sets it: perltidy-clean and perlcritic-clean
my @files = ('bin/perennial');
find(sub { push @files, $File::Find::name if /\.(?:pm|pl|t)\z/ }, qw(lib t bench));

subtest 'perltidy --assert-tidy' => sub {
    for my $file (sort @files) {
        my $out = qx{perltidy --profile=.perltidyrc --assert-tidy -st -se '$file' 2>&1 >/dev/null};
        is $? >> 8, 0, $file or diag "run 'make tidy': $out";
    }
};

subtest 'POD is well formed' => sub {
    require Pod::Checker;
    my @pod;
    find(sub { push @pod, $File::Find::name if /\.(?:pm|pod)\z/ }, 'lib');
    for my $file (sort @pod) {
        my $checker = Pod::Checker->new(-warnings => 0);
        open(my $null, '>', '/dev/null') or die $!;
        $checker->parse_from_file($file, $null);
        is $checker->num_errors, 0, $file;
    }
};

subtest 'perlcritic' => sub {
    my $out = qx{perlcritic --profile .perlcriticrc --quiet lib bin 2>&1};
    is $? >> 8, 0, 'lib and bin pass' or diag $out;
};
done_testing;
