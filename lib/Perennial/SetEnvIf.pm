package Perennial::SetEnvIf;
use v5.36;
use Exporter            qw(import);
use Perennial::Redirect ();

# mod_setenvif: variables a request sets by what it is (SetEnvIf, SetEnvIfNoCase, BrowserMatch,
# BrowserMatchNoCase), before the access rules are checked, so that Require env and Allow or
# Deny from env= see them, as Apache's do (its server level's run as the request is read,
# its sections' in the header parser phase, both before access). A script sees them in its
# environment, under the SetEnv variables (mod_env sets those after, in the fixups) and the
# CGI ones. Each rule matches one attribute of the request against a regex and sets
# (VAR, VAR=value with $1..$9 from the match) or unsets (!VAR) variables; the rules of the
# sections a request matches run in the order they were merged, the server level's first.

our @EXPORT_OK = qw(add_rule env_name variables);

# The attributes that are not a header's name, and where their value is (Remote_Host is the
# address, as Apache's under HostnameLookups Off, which is all Perennial does)
my %SPECIAL = (
    remote_host => sub ($env, $raw) { $env->{REMOTE_ADDR} },
    remote_addr => sub ($env, $raw) { $env->{REMOTE_ADDR} },
    server_addr => sub ($env, $raw) {    # Loaded with the dispatcher (it loads Config, and this)
        Perennial::Executor::Environment::server_address($env);
    },
    request_method   => sub ($env, $raw) { $env->{REQUEST_METHOD} },
    request_protocol => sub ($env, $raw) { $env->{SERVER_PROTOCOL} },

    # Apache's r->uri: as sent for a rule of the server level or a virtual host's ($raw), which
    # runs as the request is read; decoded and without dot segments for a section's
    request_uri => sub ($env, $raw) { $raw ? _sent_path($env->{REQUEST_URI}) : $env->{PATH_INFO} },
);

# The path of a request target as the client sent it: no scheme and host, no query
sub _sent_path ($target) {
    return ($target // '') =~ s{\A[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*}{}r =~ s/[?#].*//sr;
}

my $NAME = qr/\A[A-Za-z0-9_-]+\z/;

# A rule of the directive $directive (setenvif, setenvifnocase, browsermatch,
# browsermatchnocase) added to a section's settings; its error, or nothing
sub add_rule ($set, $directive, @args) {
    unshift @args, 'User-Agent' if $directive =~ /\Abrowsermatch/;
    my ($attribute, $regex, @vars) = @args;
    my $shown = $directive =~ s/\Abrowsermatch/BrowserMatch/r =~ s/\Asetenvif/SetEnvIf/r
        =~ s/nocase\z/NoCase/r;
    return "$shown takes an attribute, a regex and at least one variable"
        unless defined $regex && @vars;
    return
          "$shown: attribute '$attribute' is not a header's name or one of Remote_Host, "
        . 'Remote_Addr, Server_Addr, Request_Method, Request_Protocol, Request_URI (a regex '
        . 'of header names is not supported)'
        unless $SPECIAL{lc $attribute} || $attribute =~ $NAME;
    my $re = eval { $directive =~ /nocase\z/ ? qr/$regex/i : qr/$regex/ }
        or return "$shown: bad regex '$regex': " . ($@ =~ s/ at .*//sr);
    my $literal
        = $regex !~ m{[\^\$.\[\]|()*+?{}\\]};    # mod_setenvif's string match: values as written
    my $sets = _sets($shown, @vars);
    return $sets unless ref $sets;
    my %rule = (name => lc $attribute, re => $re, sets => $sets, literal => $literal);
    if    ($SPECIAL{lc $attribute})     { $rule{special}     = $SPECIAL{lc $attribute} }
    elsif (index($attribute, '_') >= 0) { $rule{underscored} = lc $attribute }
    else                                { $rule{header}      = _header_key($attribute) }
    push @{$set->{setenvif}}, \%rule;
    return;
}

# A rule's variables, as mod_setenvif reads them: VAR is 1, and so is VAR= ; a value that
# begins with "!" unsets, as !VAR does; names are one whatever their case (the first one's is
# kept). [[name, value], ...], or the error.
sub _sets ($shown, @vars) {
    my (@sets, %at);
    for my $var (@vars) {
        my ($unset, $name, $value) = $var =~ /\A(!?)([^=]+)(?:=(.*))?\z/s
            or return "$shown: '$var' is not VAR, VAR=value or !VAR";
        return "$shown: '$var': a variable to unset takes no value" if $unset && defined $value;
        $value = $unset ? '!' : !defined $value || $value eq '' ? '1' : $value;
        if (defined(my $i = $at{lc $name})) { $sets[$i][1] = $value; next }
        $at{lc $name} = @sets;
        push @sets, [$name, $value];
    }
    return \@sets;
}

# The environment's key of the header an attribute names (a name with "_" is read from the
# fields the parser left out, perennial.underscored, by its own name)
sub _header_key ($name) {
    my $key = uc($name) =~ tr/-/_/r;
    return $key eq 'CONTENT_LENGTH' || $key eq 'CONTENT_TYPE' ? $key : "HTTP_$key";
}

# A variable's name as a process's environment has it, as Apache's ap_create_environment makes
# it: a byte that is not a letter, a digit or "_" is "_", and so is a leading digit
sub env_name ($name) {
    return $name =~ tr/A-Za-z0-9_/_/cr =~ s/\A[0-9]/_/r;
}

# The variables the rules set for a request: lower-case name => [name, value], a hash (empty
# when none matched), as Apache's table of them, in which case does not count. An attribute
# that is no header of the request is the variable of that name an earlier rule set, else an
# empty string, as Apache's. A value takes what the match caught as ap_pregsub gives it
# (Perennial::Redirect::pregsub), unless the regex was a plain string.
sub variables ($rules, $env) {
    my %vars;
    for my $rule (@$rules) {
        my $value
            = $rule->{special} ? $rule->{special}->($env, $rule->{raw})
            : $rule->{header}  ? $env->{$rule->{header}}
            :                    ($env->{'perennial.underscored'} // {})->{$rule->{underscored}};
        my $text = $value // ($vars{$rule->{name}} // [])->[1] // '';
        $text =~ $rule->{re} or next;
        my @match = Perennial::Redirect::groups($text);
        for my $set (@{$rule->{sets}}) {
            my ($name, $template) = @$set;
            if (ord $template == ord '!') { delete $vars{lc $name}; next }
            my $made
                = $rule->{literal} ? $template : Perennial::Redirect::pregsub($template, \@match);
            if   ($vars{lc $name}) { $vars{lc $name}[1] = $made }
            else                   { $vars{lc $name}    = [$name, $made] }
        }
    }
    return \%vars;
}

1;

__END__

=head1 NAME

Perennial::SetEnvIf - mod_setenvif's SetEnvIf and BrowserMatch

=head1 SYNOPSIS

    # SetEnvIf X-Forwarded-Proto ^https$ HTTPS=on
    my $error = Perennial::SetEnvIf::add_rule($set, 'setenvif', 'X-Forwarded-Proto', '^https$', 'HTTPS=on');
    my $vars  = Perennial::SetEnvIf::variables($set->{setenvif}, $env);    # {https => ['HTTPS', 'on']}

=head1 DESCRIPTION

C<SetEnvIf ATTRIBUTE REGEX [!]VAR[=VALUE] ...>, C<SetEnvIfNoCase> (the regex without case),
C<BrowserMatch REGEX ...> and C<BrowserMatchNoCase> (the attribute C<User-Agent>), at server
level, in a virtual host or in a section. The attribute is a request header's name (case does
not matter; a name with C<_> reads the field of that name, which the parser leaves out of
everything else), or C<Remote_Host> and C<Remote_Addr> (the client's address), C<Server_Addr>,
C<Request_Method>, C<Request_Protocol> or C<Request_URI> (the path without the query: as the
client sent it for a rule of the server level or a virtual host, which Apache runs as the
request is read; decoded and without dot segments for a section's). An attribute the request
does not have is the variable of that name an earlier rule set, else an empty string, so
C<^$> finds it missing.

C<VAR> and C<VAR=> set 1, C<VAR=VALUE> sets the value, in which C<$0> to C<$9> are what the
regex caught and a backslash takes the next character as it is (Apache 2.4's ap_pregsub; a
regex without special characters is a plain string, and its values are set as written), and
C<!VAR>, or a value that begins with C<!>, unsets a variable an earlier rule set. Names are
one whatever their case (C<Require env bad_bot> sees C<BAD_BOT>), as in Apache's table of
them; a script sees a name as Apache's environment makes it (a byte that is not a letter, a
digit or C<_>, and a leading digit, as C<_>). A regex of header names as the attribute, and
C<SetEnvIfExpr>, are not supported (the configuration says so).

The variables are set before the access rules are checked: C<Require env VAR> and C<Allow from
env=VAR> see them, as Apache's do, and C<SetEnv> variables do not count there (Apache's
mod_env sets those later, in the fixups). A script sees them in its environment, under the
C<SetEnv> variables and the CGI ones of the same name; after an internal redirect, as
C<REDIRECT_*>, under those the redirect sets itself.

=head1 FUNCTIONS

=head2 add_rule

    my $error = add_rule($set, $directive, @arguments);

Adds a rule of the directive (lower case: C<setenvif>, C<setenvifnocase>, C<browsermatch>,
C<browsermatchnocase>) to C<< $set->{setenvif} >>; returns the error, or nothing.

=head2 env_name

    my $name = env_name('X-Forwarded-Proto');    # X_Forwarded_Proto

A variable's name as a process's environment gets it.

=head2 variables

    my $vars = variables($rules, $env);

What the rules set for a request, as lower-case name => [name, value].

=head1 SEE ALSO

L<Perennial::Config::PerDir>, L<Perennial::Authz>, L<Perennial::Executor::Environment>.

=cut
