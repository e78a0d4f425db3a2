use v5.36;
use utf8;
use Test::More;
use Perennial::Executor::Inc;

# The executor's list of known modules against %INC: the C functions (xs/Inc.xs) give what
# their Perl twins give, over hashes with new keys, gone keys, both, none, and keys in UTF-8 or
# with a NUL in them

plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Inc::xs_new_keys;

my @cases = (
    ['nothing',          {},                                         {}],
    ['all new',          {'A.pm' => '/x/A.pm', 'B.pm' => '/x/B.pm'}, {}],
    ['none new',         {'A.pm' => 1},                              {'A.pm' => 1}],
    ['new and gone',     {'A.pm' => 1, 'C.pm' => 1},                 {'A.pm' => 1, 'B.pm' => 1}],
    ['only gone',        {},                                         {'A.pm' => 1, 'B.pm' => 1}],
    ['UTF-8 keys',       {'Café.pm' => 1, 'plain.pm' => 1},          {'plain.pm' => 1}],
    ['a NUL in a key',   {"a\0b.pl" => 1, 'c.pl' => 1},              {'c.pl' => 1}],
    ['bytes, not UTF-8', {"Caf\xe9.pm" => 1},                        {'Café.pm' => 1}],
    ['a hundred',        {map { ("M$_.pm" => 1) } 1 .. 100}, {map { ("M$_.pm" => 1) } 50 .. 150}],
);
for my $case (@cases) {
    my ($name, $inc, $known) = @$case;
    subtest $name => sub {
        is_deeply [sort(Perennial::Executor::Inc::xs_new_keys($inc, $known))],
            [sort(Perennial::Executor::Inc::pp_new_keys($inc, $known))], 'new_keys';
        my %c = %$known;
        my %p = %$known;
        Perennial::Executor::Inc::xs_sync_known($inc, \%c);
        Perennial::Executor::Inc::pp_sync_known($inc, \%p);
        is_deeply \%c,            \%p,               'sync_known';
        is_deeply [sort keys %c], [sort keys %$inc], 'the known keys are those of %INC';
    };
}

subtest 'what is not a hash is refused' => sub {
    ok !eval { Perennial::Executor::Inc::xs_new_keys([], {}); 1 }, 'an array';
    like $@, qr/not a hash reference/, 'and says so';
    ok !eval { Perennial::Executor::Inc::xs_sync_known({}, 'x'); 1 }, 'a string';
};

done_testing;
