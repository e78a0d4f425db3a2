package Perennial::Executor::Signals;
use v5.36;
use Perennial::Twins;

# The signal handlers (and the __DIE__ hook) as a script request found them, and put back
# after it: a script that sets $SIG{ALRM} or $SIG{__DIE__} for itself must not leave it to the
# next request, or to the worker.

# The handlers the Perl twin looks at after a script that does not mention signals
my @USUAL = qw(ALRM CHLD HUP INT PIPE TERM USR1 USR2 __DIE__);

# Every handler read once, so that perl keeps each one where the C reads it (a signal never
# looked at from Perl has none kept, and its handler then would be put back as the default,
# not as what the process inherited)
{ my @all = @SIG{keys %SIG} }

# The C ones (xs/Signals.xs), or their Perl twins below
Perennial::Twins::install(__PACKAGE__, qw(snapshot changed restore));

# In Perl, every handler when asked ($all), the usual ones otherwise; the C ones see every
# handler always, for less than Perl spends on the usual nine
sub pp_snapshot ($all = 1) {
    my @names = $all ? (keys %SIG) : @USUAL;
    return [\@names, [@SIG{@names}]];
}

sub pp_changed ($saved) {
    my ($names, $was) = @$saved;
    my @now = @SIG{@$names};
    return map {
        my ($now, $then) = ($now[$_], $was->[$_]);
        ($now // '') eq ($then // '') ? () : ($names->[$_], $then)
    } 0 .. $#now;
}

# Puts back what changed since the snapshot; returns the names of those it put back
sub pp_restore ($saved) {
    my @changed = pp_changed($saved);
    my @names;
    while (my ($name, $handler) = splice @changed, 0, 2) {
        $SIG{$name} = $handler;    ## no critic (RequireLocalizedPunctuationVars)
        push @names, $name;
    }
    return @names;
}

1;

__END__

=head1 NAME

Perennial::Executor::Signals - a script request's signal handlers, put back after it

=head1 SYNOPSIS

    my $signals = Perennial::Executor::Signals::snapshot($script_mentions_signals);
    run_the_script();
    my @put_back = Perennial::Executor::Signals::restore($signals);

=head1 DESCRIPTION

What a script request does to C<%SIG> (C<$SIG{ALRM}>, C<$SIG{PIPE} = 'IGNORE'>, a
C<$SIG{__DIE__}> hook) is undone after it, as the rest of its globals are. The C functions
(F<xs/Signals.xs>) read perl's own table of handlers and look at every signal; their Perl
twins, used when C<PERENNIAL_PURE_PERL> is set or the C was not built, read C<%SIG>, which costs
more, and so look at every signal only when asked (the executor asks after a script that
mentions signals) and at the usual nine (ALRM CHLD HUP INT PIPE TERM USR1 USR2 __DIE__)
otherwise.

=head1 FUNCTIONS

=head2 changed

    my %then = Perennial::Executor::Signals::changed($signals);

The handlers that differ from the snapshot: name and handler then, for each.

=head2 restore

    my @names = Perennial::Executor::Signals::restore($signals);

Sets back, through C<%SIG>, each handler that changed; returns their names.

=head2 snapshot

    my $signals = Perennial::Executor::Signals::snapshot($all);

Every handler as it is now (C<$all> matters to the Perl twin only; see above).

=cut
