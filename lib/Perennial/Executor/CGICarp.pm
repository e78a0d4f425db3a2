package Perennial::Executor::CGICarp;
use v5.36;

# CGI::Carp's fatalsToBrowser shows a script's fatal error in the browser: under mod_cgi (no
# eval around the script) and under ModPerl::Registry (MOD_PERL set, Registry's own eval left
# out) alike. It does not when it thinks the die is inside an eval of the script's own, and it
# asks $^S for that when MOD_PERL is not set, as in a Perennial script, where $^S is true
# because of the executor's own eval around the script: the error went to the log and the client
# got the server's 500 page. CGI::Carp's ineval is wrapped once, so that within a script's run
# only an eval between the die and the script's code counts, as it would under mod_cgi.

my $WRAPPED;

# After a script's compile (Perennial::Executor::Scripts) and a request that loaded CGI::Carp
sub install () {
    return if $WRAPPED || !defined &CGI::Carp::ineval;
    my $own = \&CGI::Carp::ineval;
    no warnings 'redefine';    ## no critic (ProhibitNoWarnings) replacing it is the point
    *CGI::Carp::ineval = $WRAPPED = sub (@args) {
        my $script = _script_eval();
        return defined $script ? $script : $own->(@args);
    };
    return;
}

# Within a script's run (its code is a sub named __perennial_script): whether an eval stands
# between the caller and the script's code (1 or 0); undef elsewhere. (A script's exit, a die
# here, never reaches CGI::Carp: it runs with __DIE__ off, Perennial::Executor::Exit.)
sub _script_eval () {
    for (my $i = 2; my @frame = caller $i; $i++) {
        return 1 if $frame[3] eq '(eval)';
        return 0 if $frame[3] =~ /::__perennial_script\z/;
    }
    return undef; ## no critic (ProhibitExplicitReturnUndef) not in a script: CGI::Carp's own answer
}

1;

__END__

=head1 NAME

Perennial::Executor::CGICarp - CGI::Carp's fatalsToBrowser in a resident script, as under mod_cgi

=head1 SYNOPSIS

    Perennial::Executor::CGICarp::install();    # once CGI::Carp is loaded

=head1 DESCRIPTION

CGI::Carp decides whether a die is inside an eval (and so not for the browser) by C<$^S> when
C<MOD_PERL> is not set, which the executor's own eval around a script makes true. The wrapper
answers from the frames between the die and the script's code instead: an eval there is the
script's own; none, and C<fatalsToBrowser> shows the error, as under mod_cgi and
ModPerl::Registry. Outside a script's run it is CGI::Carp's own answer.

=head1 FUNCTIONS

=head2 install

Wraps C<CGI::Carp::ineval> once, when CGI::Carp is loaded; does nothing otherwise.

=cut
