package Perennial::Executor::CGIPragmas;
use v5.36;
use Perennial::Twins;

# CGI.pm's pragmas (use CGI qw(-nosticky -utf8 ...)) are package variables set when the script
# compiles. CGI.pm's globals are put back to their defaults before each request, which would
# drop them: under ModPerl::Registry a script's second request loses its -nosticky (gitweb's
# forms then gain a stray .cgifields field). So the pragmas a script set as it compiled are
# noted then, and set again after each reset.

my @PRAGMAS = qw(NOSTICKY NO_UNDEF_PARAMS PARAM_UTF8 XHTML NPH USE_PARAM_SEMICOLONS
    PRIVATE_TEMPFILES CLOSE_UPLOAD_FILES DEBUG TABINDEX HEADERS_ONCE DISABLE_UPLOADS POST_MAX
    APPEND_QUERY_STRING ENCODE_ENTITIES);

my %DEFAULT;    # CGI.pm's own value of each pragma variable, read once

# References to CGI.pm's pragma variables, looked up by name once per process: by name, and in
# the order of @PRAGMAS
my (%VAR, @REFS);

# Whether the pragma variables hold their defaults: in C (xs/CGIPragmas.xs), or the Perl twin
Perennial::Twins::install(__PACKAGE__, 'same_values');

sub pp_same_values ($refs, $values) {
    no warnings 'uninitialized';    ## no critic (ProhibitNoWarnings) undef is told apart below
    return 0 unless @$refs == @$values;
    for my $i (0 .. $#$refs) {
        my ($now, $was) = (${$refs->[$i]}, $values->[$i]);
        return 0 if defined $now != defined $was || $now ne $was;
    }
    return 1;
}

# Compiles with CGI.pm's pragma variables at their defaults, and returns what the compiling
# changed. Only those variables are set: a whole reset here would make every PerlRun compile
# export CGI.pm's functions anew (its export cache is one of the globals), ~15 us a request.
# Whether they hold their defaults is asked first (setting and reading the fifteen one by one
# in Perl cost 88k instructions on every PerlRun request): they are set, and what changed is
# worked out, only when they do not.
sub around_compile ($class, $compile, @args) {
    before_compile();
    my @result = $compile->(@args);
    return (@result, scalar after_compile());
}

# The two halves of around_compile, for a caller that compiles itself (PerlRun's compile of a
# text again, where the call through a list of arguments cost 5k instructions a request):
# before, the pragma variables at their defaults; after, what the compile set of them (undef:
# nothing, or no CGI.pm). The same text may set other values: a BEGIN block can read the
# request's %ENV, or a file it runs.
sub before_compile () {
    _set(_defaults()) if defined &CGI::initialize_globals && !_at_defaults();
    return;
}

sub after_compile () {
    return if !defined &CGI::initialize_globals || _at_defaults();    # No CGI.pm, or nothing set
    my %after   = _values();
    my $default = _defaults();
    my %set     = map { ($_ => $after{$_}) }
        grep { ($after{$_} // "\0undef") ne ($default->{$_} // "\0undef") } @PRAGMAS;
    return %set ? \%set : undef;
}

# CGI.pm's defaults, read now if it is loaded: the manager reads them as it makes a Registry or
# PerlRun executor, before the workers fork, so that they share what each would otherwise read
# for itself at its first script (reading them resets CGI.pm's other globals, as a script's
# first compile in a worker did)
sub read_defaults ($class) {
    _at_defaults() if defined &CGI::initialize_globals;
    return;
}

# CGI.pm sets these two once, as it loads, and its reset leaves them: read after a script that
# loaded CGI.pm set them in a BEGIN block, they would be that script's (its limit every later
# script's), so they are CGI.pm's own
my %AS_LOADED = (POST_MAX => -1, DISABLE_UPLOADS => 0);

# The defaults, read once: CGI.pm's reset, between putting the current values aside and back
sub _defaults () {
    return \%DEFAULT if %DEFAULT;
    my %now = _values();
    CGI::initialize_globals();
    %DEFAULT = (_values(), %AS_LOADED);
    _set(\%now);
    return \%DEFAULT;
}

# The same, in the order of @PRAGMAS (and @REFS); and of the variables CGI.pm's reset leaves as
# they are, their references and defaults (see _left_by_reset)
my (@DEFAULT_VALUES, @LEFT_REFS, @LEFT_VALUES);

# Whether every pragma variable holds CGI.pm's default: before and after a compile
sub _at_defaults () {
    _read_once() unless @DEFAULT_VALUES;
    return same_values(\@REFS, \@DEFAULT_VALUES);
}

sub _read_once () {
    _vars();
    @DEFAULT_VALUES = @{_defaults()}{@PRAGMAS};
    my @left = _left_by_reset();
    @LEFT_REFS   = @REFS[@left];
    @LEFT_VALUES = @DEFAULT_VALUES[@left];
    return;
}

# Which of the variables CGI.pm's reset leaves as they are (in CGI.pm 4.55: POST_MAX,
# DISABLE_UPLOADS, PRIVATE_TEMPFILES and ENCODE_ENTITIES), by their places in @PRAGMAS: each
# is given a value of its own, and those that keep it after a reset are the ones. Before a
# request only those are compared with their defaults, the others having just been reset (3k
# instructions a request for the fifteen, 1k for these). Those whose default is not the reset's
# (%AS_LOADED) are among them whatever the reset does.
sub _left_by_reset () {
    my %now  = _values();
    my $mark = "\0Perennial's mark";
    ${$_} = $mark for @REFS;
    CGI::initialize_globals();
    my @left
        = grep { (${$REFS[$_]} // '') eq $mark || exists $AS_LOADED{$PRAGMAS[$_]} } 0 .. $#PRAGMAS;
    _set(\%now);
    return @left;
}

sub _set ($values) {
    my $var = _vars();
    ${$var->{$_}} = $values->{$_} for keys %$values;
    return;
}

# Before a request: the defaults, then the script's own pragmas. CGI.pm's reset leaves some
# of them as they are ($CGI::POST_MAX and $CGI::DISABLE_UPLOADS, which its manual tells a
# script to set as it runs): those are put back too, or one script's limit would be every
# later script's (as under ModPerl::Registry; mod_cgi starts each script afresh)
sub reset ($class, $pragmas) {
    return unless defined &CGI::initialize_globals;
    CGI::initialize_globals();
    _read_once()      unless @DEFAULT_VALUES;
    _set(_defaults()) unless same_values(\@LEFT_REFS, \@LEFT_VALUES);
    _set($pragmas) if $pragmas;
    return;
}

sub _values () {
    my $var = _vars();
    return map { ($_ => ${$var->{$_}}) } @PRAGMAS;
}

sub _vars () {
    return \%VAR if %VAR;
    no strict 'refs';    ## no critic (ProhibitNoStrict) CGI.pm's own package variables
    %VAR  = map { ($_ => \${"CGI::$_"}) } @PRAGMAS;
    @REFS = @VAR{@PRAGMAS};
    return \%VAR;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGIPragmas - CGI.pm's pragmas stay with the script that asked for them

=head1 SYNOPSIS

    my ($compiled, $pragmas) = Perennial::Executor::CGIPragmas->around_compile(\&compile, @args);
    Perennial::Executor::CGIPragmas->reset($pragmas);    # before each request

=head1 DESCRIPTION

A script's C<use CGI qw(-nosticky)> (and C<-utf8>, C<-no_xhtml>, C<-newstyle_urls>, ...) sets
CGI.pm's package variables once, as it compiles. Before each request CGI.pm's globals are
reset; this module notes what compiling the script changed and sets it again after the reset,
so the script's second request behaves as its first (and as under mod_cgi, where every request
compiles anew).

=head1 METHODS

=head2 around_compile

    my (@result, $pragmas) = Perennial::Executor::CGIPragmas->around_compile($code, @args);

What C<< $code->(@args) >> returns, then what the compile changed of CGI.pm's pragma variables
(undef: nothing).

=head2 before_compile, after_compile

    Perennial::Executor::CGIPragmas::before_compile();
    my @compiled = compile(...);
    my $pragmas = scalar Perennial::Executor::CGIPragmas::after_compile();

The two halves of C<around_compile>, for a caller that compiles itself: the pragma variables
at their defaults before, and what the compile set of them after (undef: nothing, or no CGI.pm
loaded; call it in scalar context).

=head2 read_defaults

    Perennial::Executor::CGIPragmas->read_defaults;    # in the manager, before forking

Reads CGI.pm's defaults now, if CGI.pm is loaded; otherwise the first script's compile does.

=head2 reset

    Perennial::Executor::CGIPragmas->reset($pragmas);

Before a request: CGI.pm's globals reset, the limits its reset leaves put back to their
defaults, then the script's own pragmas set again.

=cut
