package Perennial::SetEnvIf;
use v5.36;
use Exporter qw(import);

# mod_setenvif: variables a request sets by what it is (SetEnvIf, SetEnvIfNoCase, BrowserMatch,
# BrowserMatchNoCase), before the access rules are checked, so that Require env and Allow or
# Deny from env= see them, as Apache's do (its server level's run as the request is read,
# its sections' in the header parser phase, both before access). A script sees them in its
# environment, under the SetEnv variables (mod_env sets those after, in the fixups) and the
# CGI ones. Each rule matches one attribute of the request against a regex and sets
# (VAR, VAR=value with $1..$9 from the match) or unsets (!VAR) variables; the rules of the
# sections a request matches run in the order they were merged, the server level's first.

our @EXPORT_OK = qw(add_rule variables);

# The attributes that are not a header's name, and where their value is (Remote_Host is the
# address, as Apache's under HostnameLookups Off, which is all Perennial does)
my %SPECIAL = (
    remote_host => sub ($env) { $env->{REMOTE_ADDR} },
    remote_addr => sub ($env) { $env->{REMOTE_ADDR} },
    server_addr => sub ($env) {    # Loaded with the dispatcher (it loads Config, and this)
        Perennial::Executor::Environment::server_address($env);
    },
    request_method   => sub ($env) { $env->{REQUEST_METHOD} },
    request_protocol => sub ($env) { $env->{SERVER_PROTOCOL} },
    request_uri      => sub ($env) { $env->{PATH_INFO} },       # Apache's r->uri: the path, decoded
);

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
    my @sets;
    for my $var (@vars) {
        my ($unset, $name, $value) = $var =~ /\A(!?)([^=]+)(?:=(.*))?\z/s
            or return "$shown: '$var' is not VAR, VAR=value or !VAR";
        return "$shown: '$var': a variable to unset takes no value" if $unset && defined $value;
        push @sets, [$name, $unset ? undef : $value // '1'];
    }
    push @{$set->{setenvif}},
        {attribute => _attribute($attribute), name => $attribute, re => $re, sets => \@sets};
    return;
}

# How an attribute is read: a special one's sub, or a header's key in the PSGI environment
sub _attribute ($name) {
    return $SPECIAL{lc $name} if $SPECIAL{lc $name};
    my $key = uc($name) =~ tr/-/_/r;
    return $key eq 'CONTENT_LENGTH' || $key eq 'CONTENT_TYPE' ? $key : "HTTP_$key";
}

# The variables the rules set for a request: name => value, a hash (empty when none matched).
# An attribute that is no header of the request is the variable of that name an earlier rule
# set, else an empty string, as Apache's.
sub variables ($rules, $env) {
    my %vars;
    for my $rule (@$rules) {
        my $attr  = $rule->{attribute};
        my $value = ref $attr ? $attr->($env) : $env->{$attr} // $vars{$rule->{name}};
        my @match = ($value // '') =~ $rule->{re} or next;
        @match = () if @match == 1 && !defined $-[1];    # No groups: the 1 of a match
        for my $set (@{$rule->{sets}}) {
            my ($name, $template) = @$set;
            if (!defined $template) { delete $vars{$name}; next }
            $vars{$name} = $template =~ s/\$([1-9])/$match[$1 - 1] \/\/ ''/ger;
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
    my $vars  = Perennial::SetEnvIf::variables($set->{setenvif}, $env);    # {HTTPS => 'on'}

=head1 DESCRIPTION

C<SetEnvIf ATTRIBUTE REGEX [!]VAR[=VALUE] ...>, C<SetEnvIfNoCase> (the regex without case),
C<BrowserMatch REGEX ...> and C<BrowserMatchNoCase> (the attribute C<User-Agent>), at server
level, in a virtual host or in a section. The attribute is a request header's name (case does
not matter), or C<Remote_Host> and C<Remote_Addr> (the client's address), C<Server_Addr>,
C<Request_Method>, C<Request_Protocol> or C<Request_URI> (the decoded path, without the
query). A header the request does not have is matched as an empty string, so C<^$> finds it
missing. C<VAR> sets 1, C<VAR=VALUE> sets the value, in which C<$1> to C<$9> are the regex's
groups, and C<!VAR> unsets a variable an earlier rule set. A regex of header names as the
attribute, and C<SetEnvIfExpr>, are not supported (the configuration says so).

The variables are set before the access rules are checked: C<Require env VAR> and C<Allow from
env=VAR> see them, as Apache's do, and C<SetEnv> variables do not count there (Apache's
mod_env sets those later, in the fixups). A script sees them in its environment, under the
C<SetEnv> variables and the CGI ones of the same name.

=head1 FUNCTIONS

=head2 add_rule

    my $error = add_rule($set, $directive, @arguments);

Adds a rule of the directive (lower case: C<setenvif>, C<setenvifnocase>, C<browsermatch>,
C<browsermatchnocase>) to C<< $set->{setenvif} >>; returns the error, or nothing.

=head2 variables

    my $vars = variables($rules, $env);

What the rules set for a request, as name => value.

=head1 SEE ALSO

L<Perennial::Config::PerDir>, L<Perennial::Authz>, L<Perennial::Executor::Environment>.

=cut
