use v5.36;
use Test::More;
use Perennial::Executor::Blocks;

# The END and INIT blocks perl has queued, counted in C (xs/Blocks.xs) and by the Perl twin
# (through B): the same counts before and after code that adds some compiles, and after they
# are taken out (t/http/pure_perl.t runs the scripts' tests, which compile scripts with END and
# INIT blocks, on the Perl twin)
plan skip_all => 'the C functions are not built (make xs)'
    unless defined &Perennial::Executor::Blocks::xs_counts;

sub both ($name) {
    my @c = Perennial::Executor::Blocks::xs_counts();
    my @p = Perennial::Executor::Blocks::pp_counts();
    is_deeply \@c, \@p, "$name: the same counts (@p)";
    return @c;
}

my ($ends, $inits) = both('at the start');
my @ran;
{
    local $SIG{__WARN__} = sub ($msg) { die $msg unless $msg =~ /Too late to run INIT block/ };
    eval <<'CODE' or die $@;
#line 1 "script.pl"
END { push @ran, 'end one' }
END { push @ran, 'end two' }
INIT { push @ran, 'init' }
#line 1 "Some/Module.pm"
END { push @ran, 'a module end' }
1;
CODE
}
is_deeply [both('after a compile')], [$ends + 3, $inits + 1], 'three END blocks and an INIT more';

my ($new_ends, $new_inits) = Perennial::Executor::Blocks::take($ends, $inits, 'script.pl');
is_deeply [both('after they are taken')], [$ends + 1, $inits],
    "the script's blocks are out of perl's queues, the module's END block stays";
$_->() for @$new_ends, @$new_inits;
is_deeply \@ran, ['end two', 'end one', 'init'],
    'the END blocks in the order perl runs them, the last first, then the INIT block';

# The module's END block is perl's, for the process's exit: take it out here, to end cleanly
my ($left) = Perennial::Executor::Blocks::take($ends, $inits, 'Some/Module.pm');
is scalar @$left, 1, "a module's END block is taken only when its file is named";
is_deeply [both('at the end')], [$ends, $inits], 'the queues are as they were';

done_testing;
