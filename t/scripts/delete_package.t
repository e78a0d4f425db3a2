use v5.36;
use Test::More;
use Symbol ();
use Perennial::Executor::Compiler;

# Compiler::delete_package (a changed Registry script's package, the packages a PerlRun script
# declares) does what Symbol::delete_package does, faster: two packages made alike, one deleted
# by each, must be left alike (the symbol tables, and what kept references to their contents
# still see)
sub make ($name) {
    my $code = <<"CODE";
package $name;
our \$scalar = 'a scalar';
our \@array  = (1, 2);
our \%hash   = (k => 'v');
sub named { 'named' }
sub stub;
use constant CONSTANT => 42;
package ${name}::Inner;
sub inner { 'inner' }
package $name;
open(DATA, '<', \\"data\\n") or die;
[\\&named, \\\$scalar, \\\@array, bless({}, '$name'), \\&${name}::Inner::inner]
CODE
    my $kept = eval $code or die $@;  ## no critic (ProhibitStringyEval) packages made to be deleted
    return $kept;
}

sub state_of ($name, $parent, $leaf, $kept) {
    no strict 'refs';                 ## no critic (ProhibitNoStrict) the packages, by name
    return {
        in_parent   => exists $parent->{"${leaf}::"}      ? 1 : 0,
        sub_named   => defined &{"${name}::named"}        ? 1 : 0,
        inner       => defined &{"${name}::Inner::inner"} ? 1 : 0,
        kept_sub    => $kept->[0]->(),
        kept_scalar => ${$kept->[1]},
        kept_array  => "@{$kept->[2]}",
        object      => ref $kept->[3],
        kept_inner  => $kept->[4]->(),
    };
}

my $symbol = make('Perennial::Test::ByPackage::Symbol');
my $ours   = make('Perennial::Test::ByPackage::Ours');
ok defined &Perennial::Test::ByPackage::Ours::named, 'the packages are made';
Symbol::delete_package('Perennial::Test::ByPackage::Symbol');
Perennial::Executor::Compiler::delete_package('Perennial::Test::ByPackage::Ours');
my $parent = \%Perennial::Test::ByPackage::;
my $want   = state_of('Perennial::Test::ByPackage::Symbol', $parent, 'Symbol', $symbol);
my $got    = state_of('Perennial::Test::ByPackage::Ours',   $parent, 'Ours',   $ours);
$want->{object} =~ s/Symbol/Ours/;
is_deeply $got, $want, 'left as Symbol::delete_package leaves a package' or diag explain $got;
is $got->{in_parent}, 0, 'the symbol table is out of its parent';
is $got->{sub_named}, 0, 'its subs are gone by name';

# PerlRun empties its script's package with Compiler::empty_package instead, so that the next
# compile finds the table: its globs are empty, what is not a glob is gone, and what kept
# references to its contents see is as after a deletion
my $emptied = make('Perennial::Test::ByPackage::Emptied');
Perennial::Executor::Compiler::empty_package('Perennial::Test::ByPackage::Emptied');
$got = state_of('Perennial::Test::ByPackage::Emptied', $parent, 'Emptied', $emptied);
$want->{object} =~ s/Ours/Emptied/;
is_deeply $got, {%$want, in_parent => 1}, 'emptied: as deleted, but the table stays'
    or diag explain $got;
{
    no strict 'refs';    ## no critic (ProhibitNoStrict) the package, by name
    my $table = \%{'Perennial::Test::ByPackage::Emptied::'};
    my @left  = grep {
        my $name = "Perennial::Test::ByPackage::Emptied::$_";
        ref \$table->{$_} ne 'GLOB' || defined &$name || defined $$name || @$name || %$name
    } keys %$table;
    is_deeply \@left, [], 'nothing is left in it: no sub, no variable, no constant'
        or diag explain \@left;
    ok !*{'Perennial::Test::ByPackage::Emptied::DATA'}{IO}, 'its handle is gone (closed)';
}

# Freeing a glob can run a DESTROY that deletes another entry of the same table (here: an object
# that empties the package its class is in, which lies in the table being emptied): the loop
# must not meet that entry freed ("Use of freed value in iteration"). Twenty packages, as the
# order of a table's entries decides whether the loop meets it.
{

    package Perennial::Test::Maker;
    sub new     ($class, $in) { bless {pkg => "${in}::Made"}, $class }
    sub DESTROY ($self)       { Perennial::Executor::Compiler::delete_package($self->{pkg}) }
}
my @failed;
for my $n (1 .. 20) {
    my $name = "Perennial::Test::Freed::P$n";
    no strict 'refs';    ## no critic (ProhibitNoStrict) packages made to be deleted
    @{"${name}::Made::ISA"} = ('Perennial::Test::Maker');
    ${"${name}::maker"}     = Perennial::Test::Maker->new($name);
    @{"${name}::list"}      = (1 .. 3);
    *{"${name}::f"}         = sub {1};
    eval { Perennial::Executor::Compiler::delete_package($name); 1 } or push @failed, "$n: $@";
}
is_deeply \@failed, [], 'a DESTROY that deletes another entry as the package goes';
@failed = ();
for my $n (1 .. 20) {
    my $name = "Perennial::Test::Emptied::P$n";
    no strict 'refs';    ## no critic (ProhibitNoStrict) packages made to be emptied
    @{"${name}::Made::ISA"} = ('Perennial::Test::Maker');
    ${"${name}::maker"}     = Perennial::Test::Maker->new($name);
    *{"${name}::f"}         = sub {1};
    eval { Perennial::Executor::Compiler::empty_package($name); 1 } or push @failed, "$n: $@";
}
is_deeply \@failed, [], 'and as the package is emptied';

# A name with the table's trailing ::, as Symbol takes it too
make('Perennial::Test::Trailing');
Perennial::Executor::Compiler::delete_package('Perennial::Test::Trailing::');
ok !exists $Perennial::Test::{'Trailing::'}, 'a name ending in :: is the package before it';

# A package of main::, and one that does not exist
make('PerennialTestTopLevel');
Perennial::Executor::Compiler::delete_package('PerennialTestTopLevel');
ok !exists $main::{'PerennialTestTopLevel::'}, 'a package of main:: goes from main::';
Perennial::Executor::Compiler::delete_package('Perennial::Test::ByPackage::Never');
ok !exists $parent->{'Never::'}, 'a package that did not exist is not made';

done_testing;
