package Perennial::Executor::Globals;
use v5.36;
use Perennial::Twins;

# A script request's global variables as a new perl has them, and the worker's put back after
# it: a guard that does it as the scope that holds it ends, on every way out, as `local` would,
# for less (the C, xs/Globals.xs, changes only what differs; its Perl twin is below)

Perennial::Twins::install(__PACKAGE__, 'enter');

# The punctuation variables, and what a new perl gives them ($/ $, $\ $" $; $@)
my @NEW         = ("\n", undef, undef, ' ', "\034", '');
my @PUNCTUATION = ('/',  ',',   '\\',  '"', ';',    '@');

## no critic (RequireLocalizedPunctuationVars) what the guard sets, it puts back
sub pp_enter ($inc, $argv) {
    my $was = {
        punctuation => [$/,  $,,  $\,  $",  $;,  $@],
        slots       => [\$/, \$,, \$\, \$", \$;, \$@],    # Put back if a script replaces them
        dowarn      => $^W,
        basetime    => $^T,
        inc         => \@INC,
        argv        => \@ARGV
    };
    _punctuation(@NEW);
    $^T   = time;
    *INC  = [@$inc];
    *ARGV = [$argv ? @$argv : ()];
    return bless $was, 'Perennial::Executor::Globals::Guard';
}

# The punctuation variables themselves back in their globs (a script may have put others there)
sub _slots (@refs) {
    no strict 'refs';    ## no critic (ProhibitNoStrict) the globs of main::, by name
    *{"main::$PUNCTUATION[$_]"} = $refs[$_] for 0 .. $#refs;
    return;
}

sub _punctuation (@values) {
    ($/, $,, $\, $", $;, $@) = @values;
    return;
}

# (perl keeps $@ from what a DESTROY sets: the worker's goes on with what the script left there,
# which the next request's enter empties)
sub Perennial::Executor::Globals::Guard::DESTROY ($was) {
    $^W   = $was->{dowarn};
    $^T   = $was->{basetime};
    *INC  = $was->{inc};
    *ARGV = $was->{argv};
    _slots(@{$was->{slots}});
    _punctuation(@{$was->{punctuation}});
    return;
}
## use critic

1;

__END__

=head1 NAME

Perennial::Executor::Globals - a script request's global variables, and the worker's put back

=head1 SYNOPSIS

    {
        my $guard = Perennial::Executor::Globals::enter($script->{inc}, \@isindex_words);
        run_the_script();
    }    # $/ $, $\ $" $; $@ $^W $^T @INC @ARGV are the worker's again

=head1 DESCRIPTION

A script starts each request with Perl's punctuation variables as a new perl has them (C<$/>
a newline, C<$,> and C<$\> undefined, C<$"> a space, C<$;> C<\034>, C<$@> empty), C<$^T> the
request's time, C<@INC> a copy of the script's own (its C<use lib> paths; what it changes lasts
one request), C<@ARGV> the words of an ISINDEX query, and C<$^W> as the worker has it. The
guard C<enter> returns puts the worker's values back when it is freed, as the scope that holds
it ends, whatever the script, its destructors or an C<UNTIE> set meanwhile: what C<local> would
do for each, for a fifth of its cost. The C (F<xs/Globals.xs>) changes only what differs from
what the script is to get, and puts back from a free hook; the Perl twin is a blessed hash
with a C<DESTROY>.

=head1 FUNCTIONS

=head2 enter

    my $guard = Perennial::Executor::Globals::enter(\@inc, \@argv);    # \@argv or undef

=cut
