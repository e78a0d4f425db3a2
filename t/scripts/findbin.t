use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(in_process_get resident_app scratch_dir write_script);

# FindBin describes the script that runs, whichever script loaded it first and whether it was
# loaded before or while a script compiled: its BEGIN blocks (`use lib "$FindBin::Bin/lib"`)
# and its run see their own directory, request after request, under Registry and PerlRun. Each
# mode runs in a process of its own, so that FindBin is loaded first by a script there.
plan skip_all => 'FindBin is loaded already' if $INC{'FindBin.pm'};

my $dir = scratch_dir();
mkdir "$dir/$_" or die "Can't make $dir/$_: $!" for qw(one two);
my $script = <<'EOF';
BEGIN { require FindBin; our $AT = $FindBin::Bin }
print "Content-Type: text/plain\n\n", "compiled in ", our $AT =~ s{.*/}{}r, ", runs in ",
    $FindBin::Bin =~ s{.*/}{}r, ' as ', $FindBin::Script;
EOF
write_script("$dir/one/a.pl", $script, time - 10);
write_script("$dir/two/b.pl", $script, time - 10);

for my $mode (qw(registry perlrun)) {
    my $pid = open(my $child, '-|') // die "Can't fork: $!";
    if (!$pid) {
        my $app = resident_app($mode, $dir);
        for (1 .. 2) {
            say join '', @{in_process_get($app, "/$mode", $_)->[2]} for 'one/a.pl', 'two/b.pl';
        }
        exit 0;
    }
    my @got = map { chomp; $_ } <$child>;
    close $child;
    is_deeply \@got,
        [('compiled in one, runs in one as a.pl', 'compiled in two, runs in two as b.pl') x 2],
        "$mode: each script's own directory, as it compiles and as it runs";
}

done_testing;
