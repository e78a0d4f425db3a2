use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(in_process_get resident_app scratch_dir write_script);

# PerlRun compiles its script on every request but reads what a text says (its data, its
# shebang, its packages, what it uses) once per text: an edit is seen on the next request, even
# one of the same size in the same second, and what depends on the moment of the compile (the
# packages the script declares, its END blocks, DATA) is as on a first compile every time.
# In process: the executor's PSGI application, called as the server calls it.
my $dir = scratch_dir();
my $app = resident_app(perlrun => $dir);

sub get ($name) {
    my $res = in_process_get($app, '/perlrun', $name);
    return join '', $res->[0], ' ', @{$res->[2] // []};
}

my $when = time - 100;
my $head = "print qq{Content-Type: text/plain\\n\\n};\n";
write_script("$dir/edit.pl", $head . "print 'one';\n", $when);
is get('edit.pl'), '200 one', 'the first text';
is get('edit.pl'), '200 one', 'the same text again';
write_script("$dir/edit.pl", $head . "print 'two';\n", $when);
is get('edit.pl'), '200 two', 'an edit of the same size with the same time is seen';
my $warns
    = $head
    . q{my $said = 'quiet'; local $SIG{__WARN__} = sub { $said = 'warned' };}
    . q{my @a; my $x = 'x' . $a[1]; print $said;} . "\n";
write_script("$dir/warn.pl", "#!/usr/bin/perl\n" . $warns, $when);
is get('warn.pl'), '200 quiet', 'no -w: no warnings';
write_script("$dir/warn.pl", "#!/usr/bin/perl -w\n" . $warns, $when);
is get('warn.pl'), '200 warned', 'a -w added to the shebang: its warnings are on';

write_script("$dir/package.pl", <<'EOF', $when);
package Tally;
our $count;
$count .= 'x';
print "Content-Type: text/plain\n\n", $count, ' ', scalar <DATA>;
END { $Tally::ended++ }
__DATA__
data line
EOF
is get('package.pl'), "200 x data line\n", 'a package of its own, DATA';
is get('package.pl'), "200 x data line\n", 'and again: its package is new, DATA read again';
is get('package.pl'), "200 x data line\n", 'and a third time';

write_script("$dir/package.pl", $head . "print 'no package now';\n", $when);
is get('package.pl'), '200 no package now', 'the text without them';

# From the second request on, the same text compiles again into the script object of the
# request before: what is fresh on each compile must still be fresh
write_script("$dir/fresh.pl", $head . <<'EOF', $when);
my $mine;
our $ours;
$mine++;
$ours++;
BEGIN { $main::perlrun_begins++ }
END { $main::perlrun_ends++ }
print "$mine $ours";
EOF
is get('fresh.pl'), '200 1 1', 'file lexicals and package variables start empty';
is get('fresh.pl'), '200 1 1', 'and again, compiled again into the same script';
is get('fresh.pl'), '200 1 1', 'and a third time';
is "$::perlrun_begins $::perlrun_ends", '3 3',    ## no critic (ProhibitPackageVars)
    'BEGIN ran at each compile and END after each request';

write_script("$dir/fresh.pl", $head . "print 'broken'\nprint 'two';\n", $when);
is + (in_process_get($app, '/perlrun', 'fresh.pl'))->[0], 500, 'an edit that does not compile: 500';
write_script("$dir/fresh.pl", $head . "print 'mended';\n", $when);
is get('fresh.pl'), '200 mended', 'mended: compiled afresh';
is get('fresh.pl'), '200 mended', 'and again';

# After each request the script's package is emptied, not deleted: constants, declarations,
# subs and handles of one request are not the next one's, even when the text changes
my $consts = $head . <<'EOF';
use constant LIMIT => VALUE;
sub later;
sub twice { return 2 * shift }
our @seen;
push @seen, LIMIT;
open(OUT, '<', \'') or die;
print join ',', twice(LIMIT), scalar(@seen), defined(&later) ? 'defined' : 'declared',
    defined(fileno OUT) ? 'open' : 'closed';
EOF
write_script("$dir/consts.pl", $consts =~ s/VALUE/3/r, $when);
is get('consts.pl'), '200 6,1,declared,open', 'a constant, a declaration, a sub, a handle';
is get('consts.pl'), '200 6,1,declared,open', 'and again in the emptied package';
write_script("$dir/consts.pl", $consts =~ s/VALUE/4/r, $when);
is get('consts.pl'), '200 8,1,declared,open', 'the constant changed: its new value';
{
    no strict 'refs';    ## no critic (ProhibitNoStrict)
    my ($package) = grep {/consts_2epl::\z/} map { _tables($_) } 'Perennial::ROOT::';
    ok $package, 'the package is there after the request';
    is_deeply [grep { defined &{"$package$_"} || @{"$package$_"} } keys %$package], [],
        'with nothing in it';
}

# Found by a review: nothing of one request's package may reach the next, whether a request
# made the name (symbolic references), declared it (use vars) or a DESTROY wrote it as the
# package was emptied; a format does not keep the compile before alive; FindBin is the file's
# as it is now, at run time too
write_script("$dir/names.pl", $head . <<'EOF', $when);
no strict 'refs';
my $n = ++$main::perlrun_names;
${"field_$n"} = 1;
print scalar grep { /^field_/ } keys %{__PACKAGE__ . '::'};
EOF
is get('names.pl'), '200 1', 'a name made by a symbolic reference';
is get('names.pl'), '200 1', 'is not there for the next request';
write_script("$dir/vars.pl",
    $head . "use strict; use vars qw(\$count); \$count++; print \$count;\n", $when);
is get('vars.pl'), '200 1', 'use vars declares a global';
write_script("$dir/vars.pl", $head . "use strict; \$count++; print \$count;\n", $when);
is + (in_process_get($app, '/perlrun', 'vars.pl'))->[0], 500,
    'taken out of the text, the global is not declared any more (strict refuses it)';
{

    package Perennial::Test::Guard;
    no strict 'refs';    ## no critic (ProhibitNoStrict) the script's @log, by name
    sub DESTROY { push @{"$_[0][0]::log"}, 1 }
}
write_script("$dir/guards.pl", $head . <<'EOF', $when);
our @log;
print 'log=', scalar(@log);
no strict 'refs';
${"o$_"} = bless [__PACKAGE__], 'Perennial::Test::Guard' for 1 .. 30;
EOF
is get('guards.pl'), '200 log=0', 'a global written by a DESTROY as the package empties';
is get('guards.pl'), '200 log=0', 'is not the next request\'s';
is get('guards.pl'), '200 log=0', 'nor the one after';
write_script("$dir/format.pl", <<'EOF', $when);
use Scalar::Util ();
push @main::perlrun_codes, \&__perennial_script;
Scalar::Util::weaken($main::perlrun_codes[-1]);
our $v = 'formatted';
print "Content-Type: text/plain\n\n";
write;
format STDOUT =
@<<<<<<<<<
$v
.
EOF
is get('format.pl'), "200 formatted\n", 'a script with a format';
is get('format.pl'), "200 formatted\n", 'again';
is get('format.pl'), "200 formatted\n", 'and again';

# (The first compile's format is STDOUT's own, where the next ones find it: it stays)
ok !defined $main::perlrun_codes[1], 'the compile of a request before is freed';
ok !defined $main::perlrun_codes[2], 'and the last one, once its request ended';
SKIP: {
    skip 'no symbolic links here', 2 unless eval { symlink '', ''; 1 };
    mkdir "$dir/$_" for qw(r1 r2);
    my $findbin = $head . <<'EOF';
use FindBin;
my $compiled;
BEGIN { $compiled = $FindBin::RealBin }
print $compiled eq $FindBin::RealBin ? 'same' : "compiled in $compiled, runs in $FindBin::RealBin";
print ' ', $FindBin::RealBin =~ m{/(r\d)\z};
EOF
    write_script("$dir/$_/app.pl", $findbin, $when) for qw(r1 r2);
    symlink 'r1', "$dir/cur" or die "Can't link: $!";
    is get('cur/app.pl'), '200 same r1', 'FindBin through a symbolic link';
    unlink "$dir/cur";
    symlink 'r2', "$dir/cur" or die "Can't link: $!";
    is get('cur/app.pl'), '200 same r2', 'the link moved to a copy of the same text: the new one';
}

sub _tables ($name) {
    no strict 'refs';    ## no critic (ProhibitNoStrict)
    return $name, map { _tables("$name$_") } grep {/::\z/} keys %$name;
}

done_testing;
