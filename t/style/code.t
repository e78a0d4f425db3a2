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

subtest 'perlcritic' => sub {
    my $out = qx{perlcritic --profile .perlcriticrc --quiet lib bin 2>&1};
    is $? >> 8, 0, 'lib and bin pass' or diag $out;
};
done_testing;
