use v5.36;
use Test::More;
use Perennial::Executor::Signals;

# A script request's changes to its signal handlers are put back, by the C functions and by
# their Perl twins alike: a code reference, IGNORE, DEFAULT, a sub's name, a deleted entry,
# the __DIE__ hook; the handler that runs on a real signal afterwards is the one from before;
# a disposition inherited from the parent (IGNORE across exec) is kept. (t/scripts/modes.t
# sees it from a real script, t/http/pure_perl.t runs that on the Perl twins.)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Signals::xs_snapshot;

my @got;
sub before_usr2 ($name) { push @got, "before $name" }

for my $impl ('xs', 'pp') {
    my $snapshot = \&{"Perennial::Executor::Signals::${impl}_snapshot"};
    my $changed  = \&{"Perennial::Executor::Signals::${impl}_changed"};
    local $SIG{USR2}    = \&before_usr2;
    local $SIG{HUP}     = 'IGNORE';
    local $SIG{ALRM}    = 'DEFAULT';
    local $SIG{TERM}    = 'main::before_usr2';
    local $SIG{__DIE__} = sub { die @_ };
    my %before = map { $_ => $SIG{$_} } qw(USR2 HUP ALRM TERM __DIE__ WINCH);

    my $saved = $snapshot->(1);
    is_deeply [$changed->($saved)], [], "$impl: nothing changed, nothing to put back";

    # What a script might do
    $SIG{USR2}    = sub { push @got, 'the script\'s' };
    $SIG{HUP}     = 'DEFAULT';
    $SIG{ALRM}    = sub { };
    $SIG{TERM}    = 'IGNORE';
    $SIG{__DIE__} = undef;
    $SIG{WINCH}   = 'IGNORE';
    my %changed = $changed->($saved);
    is_deeply [sort keys %changed], [sort qw(USR2 HUP ALRM TERM __DIE__ WINCH)],
        "$impl: each change is seen";

    # Put back through %SIG, as restore does
    $SIG{$_} = $changed{$_} for keys %changed;
    is_deeply {
        map { $_ => $SIG{$_} } keys %before
    }, \%before, "$impl: all put back";
    @got = ();
    kill USR2 => $$;
    is_deeply \@got, ['before USR2'], "$impl: the handler from before runs on a real signal";

    # A deleted entry is a change too
    delete $SIG{USR2};
    %changed = $changed->($saved);
    is_deeply [keys %changed], ['USR2'], "$impl: a deleted handler is a change";
    $SIG{USR2} = $changed{USR2};
    is $SIG{USR2}, \&before_usr2, "$impl: and it is put back";

    # The same handler set again is no change
    $SIG{HUP} = 'IGNORE';
    is_deeply [$changed->($saved)], [], "$impl: the same value set again is no change";
}

# restore, with whichever implementation runs, and what it says it put back
{
    local $SIG{USR1} = 'IGNORE';
    my $saved = Perennial::Executor::Signals::snapshot(0);
    $SIG{USR1} = sub { };
    is_deeply [Perennial::Executor::Signals::restore($saved)], ['USR1'], 'restore names it';
    is $SIG{USR1}, 'IGNORE', 'and puts it back';
    is_deeply [Perennial::Executor::Signals::restore($saved)], [], 'once';
}

# restore by each implementation, and snapshots one inside the other (a script's internal
# redirect runs another script within its request): each puts back its own
for my $impl ('xs', 'pp') {
    my $snapshot = \&{"Perennial::Executor::Signals::${impl}_snapshot"};
    my $restore  = \&{"Perennial::Executor::Signals::${impl}_restore"};
    local $SIG{USR2}    = \&before_usr2;
    local $SIG{HUP}     = 'IGNORE';
    local $SIG{__DIE__} = sub { die @_ };
    my $die = $SIG{__DIE__};

    my $outer = $snapshot->(1);
    is_deeply [$restore->($snapshot->(1))], [], "$impl: a snapshot taken again, nothing to do";
    $SIG{USR2} = 'IGNORE';        # The outer script
    my $inner = $snapshot->(1);
    $SIG{HUP}     = 'DEFAULT';    # The inner one
    $SIG{__DIE__} = undef;
    delete $SIG{USR2};
    is_deeply [sort $restore->($inner)], [sort qw(HUP USR2 __DIE__)],
        "$impl: the inner request's changes are put back";
    is_deeply [$SIG{USR2}, $SIG{HUP}, $SIG{__DIE__}], ['IGNORE', 'IGNORE', $die],
        "$impl: as the outer script had them";
    is_deeply [$restore->($outer)], ['USR2'], "$impl: then the outer one's";
    is $SIG{USR2}, \&before_usr2, "$impl: as the worker had it";
}

# A disposition the process inherited and never looked at from Perl: IGNORE is put back as
# IGNORE, not as the default
for my $impl ('', 'PERENNIAL_PURE_PERL=1') {
    my $code = <<'CODE';
use Perennial::Executor::Signals;
my $saved = Perennial::Executor::Signals::snapshot(1);
$SIG{HUP} = sub { };
Perennial::Executor::Signals::restore($saved);
kill HUP => $$;
print "survived, HUP is $SIG{HUP}\n";
CODE
    my $out = `$impl $^X -e '\$SIG{HUP} = "IGNORE"; exec \@ARGV' $^X -Ilib -e '$code' 2>&1`;
    is $out, "survived, HUP is IGNORE\n", ($impl || 'C') . ': an inherited IGNORE stays';
}

done_testing;
