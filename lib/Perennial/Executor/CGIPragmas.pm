package Perennial::Executor::CGIPragmas;
use v5.36;

# CGI.pm's pragmas (use CGI qw(-nosticky -utf8 ...)) are package variables set when the script
# compiles. CGI.pm's globals are put back to their defaults before each request, which would
# drop them: under ModPerl::Registry a script's second request loses its -nosticky (gitweb's
# forms then gain a stray .cgifields field). So the pragmas a script set as it compiled are
# noted then, and set again after each reset.

my @PRAGMAS = qw(NOSTICKY NO_UNDEF_PARAMS PARAM_UTF8 XHTML NPH USE_PARAM_SEMICOLONS
    PRIVATE_TEMPFILES CLOSE_UPLOAD_FILES DEBUG TABINDEX HEADERS_ONCE DISABLE_UPLOADS POST_MAX
    APPEND_QUERY_STRING ENCODE_ENTITIES);

my %DEFAULT;    # CGI.pm's own value of each pragma variable, read once

# Compiles with CGI.pm's pragma variables at their defaults, and returns what the compiling
# changed. Only those variables are set: a whole reset here would make every PerlRun compile
# export CGI.pm's functions anew (its export cache is one of the globals), ~15 us a request.
sub around_compile ($class, $compile) {
    _set(_defaults()) if defined &CGI::initialize_globals;
    my @result = $compile->();
    return (@result, undef) unless defined &CGI::initialize_globals;    # The script has no CGI.pm
    my %after   = _values();
    my $default = _defaults();
    my %set     = map { ($_ => $after{$_}) }
        grep { ($after{$_} // "\0undef") ne ($default->{$_} // "\0undef") } @PRAGMAS;
    return (@result, %set ? \%set : undef);
}

# The defaults, read once: CGI.pm's reset, between putting the current values aside and back
sub _defaults () {
    return \%DEFAULT if %DEFAULT;
    my %now = _values();
    CGI::initialize_globals();
    %DEFAULT = _values();
    _set(\%now);
    return \%DEFAULT;
}

sub _set ($values) {
    my $var = _vars();
    ${$var->{$_}} = $values->{$_} for keys %$values;
    return;
}

# Before a request: the defaults, then the script's own pragmas
sub reset ($class, $pragmas) {
    return unless defined &CGI::initialize_globals;
    CGI::initialize_globals();
    _set($pragmas) if $pragmas;
    return;
}

sub _values () {
    my $var = _vars();
    return map { ($_ => ${$var->{$_}}) } @PRAGMAS;
}

# References to CGI.pm's pragma variables, looked up by name once per process
my %VAR;

sub _vars () {
    return \%VAR if %VAR;
    no strict 'refs';    ## no critic (ProhibitNoStrict) CGI.pm's own package variables
    %VAR = map { ($_ => \${"CGI::$_"}) } @PRAGMAS;
    return \%VAR;
}

1;

__END__

=head1 NAME

Perennial::Executor::CGIPragmas - CGI.pm's pragmas stay with the script that asked for them

=head1 SYNOPSIS

    my ($compiled, $pragmas) = Perennial::Executor::CGIPragmas->around_compile(sub { compile() });
    Perennial::Executor::CGIPragmas->reset($pragmas);    # before each request

=head1 DESCRIPTION

A script's C<use CGI qw(-nosticky)> (and C<-utf8>, C<-no_xhtml>, C<-newstyle_urls>, ...) sets
CGI.pm's package variables once, as it compiles. Before each request CGI.pm's globals are
reset; this module notes what compiling the script changed and sets it again after the reset,
so the script's second request behaves as its first (and as under mod_cgi, where every request
compiles anew).

=head1 METHODS

=head2 around_compile

    my (@result, $pragmas) = Perennial::Executor::CGIPragmas->around_compile($code);

=head2 reset

    Perennial::Executor::CGIPragmas->reset($pragmas);

=cut
