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

# Compiles with CGI.pm's globals at their defaults, and returns what the compiling changed
sub around_compile ($class, $compile) {
    CGI::initialize_globals() if defined &CGI::initialize_globals;
    my @result = $compile->();
    return (@result, undef) unless defined &CGI::initialize_globals;    # The script has no CGI.pm

    # What the script set, against the defaults (CGI.pm may have been loaded by the script)
    my %after = _values();
    CGI::initialize_globals();
    my %default = _values();
    my %set     = map { ($_ => $after{$_}) }
        grep { ($after{$_} // "\0undef") ne ($default{$_} // "\0undef") } @PRAGMAS;
    return (@result, %set ? \%set : undef);
}

# Before a request: the defaults, then the script's own pragmas
sub reset ($class, $pragmas) {
    return unless defined &CGI::initialize_globals;
    CGI::initialize_globals();
    return unless $pragmas;
    no strict 'refs';    ## no critic (ProhibitNoStrict) CGI.pm's own package variables
    ${"CGI::$_"} = $pragmas->{$_} for keys %$pragmas;
    return;
}

sub _values () {
    no strict 'refs';    ## no critic (ProhibitNoStrict) CGI.pm's own package variables
    return map { ($_ => ${"CGI::$_"}) } @PRAGMAS;
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
