package Perennial::Executor::Blocks;
use v5.36;
use B ();
use Perennial::Twins;

# The END and INIT blocks a script adds to perl's queues as it compiles: counted before and
# after (in C from xs/Blocks.xs, in Perl through B), and taken out when there are new ones.
Perennial::Twins::install(__PACKAGE__, qw(counts));

sub pp_counts () { (_count(B::end_av), _count(B::init_av)) }

sub _count ($av) { $av->isa('B::AV') ? scalar @{$av->object_2svref} : 0 }

# The END blocks added since there were $ends, and the INIT blocks since there were $inits, as
# two lists: taken out of perl's queues, each in the order perl would run them. Perl puts new
# END blocks at the front of their list and INIT blocks at the back. END blocks then run after
# every request and not again at worker exit (as mod_perl does for Registry scripts). Of the END
# blocks, only those written in $file are taken: the END block of a module the script loads
# (Log::Log4perl's, which empties its loggers) stays perl's, for the worker's exit.
sub take ($ends, $inits, $file) {
    return ([_take(B::end_av, 0, $ends, $file)], [_take(B::init_av, 1, $inits)]);
}

sub _take ($av, $at_back, $before, $file = undef) {
    return () unless $av->isa('B::AV');
    my $list = $av->object_2svref;
    my $new  = @$list - $before;
    return () if $new <= 0;
    my $first = $at_back ? $before : 0;
    my @taken;

    # From the last new one back, so that the places of those still to look at do not move;
    # the blocks left are never copied (perl cannot copy a CV held in an array)
    for my $at (reverse $first .. $first + $new - 1) {
        my $cv = B::svref_2object(\$list->[$at]);
        next unless $cv->isa('B::CV') && (!defined $file || $cv->FILE eq $file);
        unshift @taken, map { B::svref_2object(\$_)->object_2svref } splice @$list, $at, 1;
    }
    return @taken;
}

1;

__END__

=head1 NAME

Perennial::Executor::Blocks - the END and INIT blocks a script adds as it compiles

=head1 SYNOPSIS

    my ($ends, $inits) = Perennial::Executor::Blocks::counts();
    compile_the_script();
    my ($new_ends, $new_inits) = Perennial::Executor::Blocks::take($ends, $inits, $path)
        if join(',', Perennial::Executor::Blocks::counts()) ne "$ends,$inits";

=head1 FUNCTIONS

=head2 counts

How many END blocks and how many INIT blocks perl has queued: in C (F<xs/Blocks.xs>) when
built, through L<B> otherwise (L<Perennial::Twins>).

=head2 take

The blocks added since the counts given, taken out of perl's queues: two array references, the
END blocks written in the file named (in the order perl runs END blocks, the last compiled
first) and the INIT blocks (the first compiled first).

=cut
