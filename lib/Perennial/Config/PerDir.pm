package Perennial::Config::PerDir;
use v5.36;
use Exporter qw(import);
use Perennial::Access;
use Perennial::Config::Handlers;
use Perennial::Redirect;
use Perennial::SetEnvIf qw(add_rule);

# Apache's per-directory directives: those that may stand in <Directory>, <Files>, <Location>
# and their Match forms, and most of them at server level too, where they are the base every
# section is merged onto. One table: the directive, where it may be, and how it is read into a
# section's settings. Perennial::Walk merges the settings of the sections a request matches.

our @EXPORT_OK = qw(per_dir_directive);

my %SET_HANDLER = map { $_ => 1 }
    qw(psgi perl-script modperl cgi-script server-status perl-status default-handler none server-health);

# Options Apache knows; All is all of them but MultiViews
my @ALL_OPTIONS = qw(ExecCGI FollowSymLinks Includes IncludesNOEXEC Indexes
    SymLinksIfOwnerMatch);
my %OPTION = map { lc $_ => $_ } @ALL_OPTIONS, 'MultiViews';

# name => [where ('any': server level too; 'section'; 'inner': in a section here, at server
#          level a server setting; 'location': a plain <Location> only),
#          number of arguments (min, max; undef: any), reader]
my %TABLE = (
    sethandler => [
        any => 1,
        1,
        sub ($set, $value) {
            return
                  "SetHandler '$value' is not supported "
                . '(psgi, perl-script, modperl, cgi-script, server-status, perl-status, '
                . 'server-health, default-handler, None)'
                unless $SET_HANDLER{lc $value};
            $set->{handler} = lc $value eq 'none' ? 'default-handler' : lc $value;
            return;
        }
    ],
    psgiapp         => [location => 1, 1, sub ($set, $value) { $set->{app} = $value; return }],
    perlscriptcheck => [
        any => 1,
        1,
        sub ($set, $value) {
            return "PerlScriptCheck must be Always, Never or a number of seconds, got '$value'"
                unless $value =~ /\A(?:always|never|\d+)\z/i;
            $set->{script_check} = lc $value;
            return;
        }
    ],
    requestdeadline => [inner => 1, 1, sub ($set, $v) { _seconds($set, RequestDeadline => $v) }],
    slowrequesttime => [inner => 1, 1, sub ($set, $v) { _seconds($set, SlowRequestTime => $v) }],
    allowoverride   => [
        section => 1,
        undef,
        sub ($set, @values) {
            return if @values == 1 && lc $values[0] eq 'none';
            return
                "AllowOverride @values is not supported: Perennial reads no .htaccess files (use None)";
        }
    ],
    allowoverridelist => [section => 1, undef, sub ($set, @v) {return}],
    options           => [any     => 1, undef, \&_options],
    perloptions       => [any     => 1, undef, \&_perl_options],
    require           => [section => 1, undef, \&_require],
    directoryindex    => [
        any => 1,
        undef,
        sub ($set, @names) {
            $set->{directory_index} = lc $names[0] eq 'disabled' ? [] : [@names];
            return;
        }
    ],
    directoryslash => [any => 1, 1, _on_off(directory_slash => 'DirectorySlash')],
    addhandler     =>
        [any => 2, undef, sub ($set, $h, @ext) { _by_extension($set, 'add_handler', $h, @ext) }],
    addtype =>
        [any => 2, undef, sub ($set, $t, @ext) { _by_extension($set, 'add_type', $t, @ext) }],
    addencoding => [
        any => 2,
        undef,
        sub ($set, $e, @ext) { _by_extension($set, 'add_encoding', lc $e, @ext) }
    ],
    forcetype => [
        any => 1,
        1,
        sub ($set, $type) {
            $set->{force_type} = lc $type eq 'none' ? '' : $type;
            return;
        }
    ],
    setenv => [any => 1, 2, sub ($set, $n, $v = '') { $set->{set_env}{$n} = $v; return }],
    (   map {
            my $directive = $_;
            ($directive => [any => 2, undef, sub ($set, @a) { add_rule($set, $directive, @a) }])
        } qw(setenvif setenvifnocase browsermatch browsermatchnocase)
    ),
    passenv => [any => 1, undef, sub ($set, @names) { push @{$set->{pass_env}}, @names; return }],
    perlsetupenv => [any => 1, 1, _on_off(setup_env => 'PerlSetupEnv')],
    cgipassauth  => [any => 1, 1, _on_off(pass_auth => 'CGIPassAuth')],
);
$TABLE{errordocument} = [
    any => 2,
    2,
    sub ($set, $code, $action) {
        return "ErrorDocument: '$code' is not an error status (400-599)"
            unless $code =~ /\A[45]\d\d\z/;
        $set->{error_documents}{$code} = $action;
        return;
    }
];
$TABLE{adddefaultcharset} = [
    any => 1,
    1,
    sub ($set, $value) {
        $set->{default_charset}
            = lc $value eq 'off' ? '' : lc $value eq 'on' ? 'iso-8859-1' : $value;
        return;
    }
];
for my $name (qw(Redirect RedirectMatch RedirectPermanent RedirectTemp)) {
    $TABLE{lc $name} = [
        any => 1,
        3,
        sub ($set, @args) {
            my $r = Perennial::Redirect->parse($name, \@args,
                ($set->{kind} // "") eq "location" ? $set->{path} : undef);
            return $r unless ref $r;
            push @{$set->{redirects}}, $r;
            return;
        }
    ];
}
$TABLE{order} = [
    section => 1,
    1,
    sub ($set, $value) {
        my $order = lc($value =~ s/\s+//gr);
        return "Order must be Deny,Allow, Allow,Deny or Mutual-failure, got '$value'"
            unless $order =~ /\A(?:deny,allow|allow,deny|mutual-failure)\z/;
        $set->{access_compat}{order} = $order;
        return;
    }
];
$TABLE{allow}   = [section => 2, undef, sub ($set, @args) { _allow_deny($set, allow => @args) }];
$TABLE{deny}    = [section => 2, undef, sub ($set, @args) { _allow_deny($set, deny  => @args) }];
$TABLE{satisfy} = [
    section => 1,
    1,
    sub ($set, $value) {
        return "Satisfy must be All or Any, got '$value'" unless $value =~ /\A(?:all|any)\z/i;
        $set->{access_compat}{satisfy} = lc $value;
        return;
    }
];
$TABLE{authtype} = [
    section => 1,
    1,
    sub ($set, $value) {

        # Another type is a PerlAuthenHandler's own (Apache2::AuthCookie's way); with no such
        # handler, its requests are a 500, as Apache's when no module checks the user
        return
              "AuthType $value is mod_auth_"
            . lc($value)
            . "'s, which Perennial does not have "
            . '(Basic, None, or a type that a PerlAuthenHandler checks)'
            if $value =~ /\A(?:digest|form)\z/i;
        $set->{auth_type} = $value;
        return;
    }
];
$TABLE{authname}     = [section => 1, 1, sub ($set, $v) { $set->{auth_name}      = $v; return }];
$TABLE{authuserfile} = [section => 1, 1, sub ($set, $v) { $set->{auth_user_file} = $v; return }];
$TABLE{authbasicprovider} = [
    section => 1,
    undef,
    sub ($set, @v) {
        return "AuthBasicProvider @v is not supported (file)" if grep { lc ne 'file' } @v;
        return;
    }
];
$TABLE{perlsetvar}
    = [any => 2, 2, sub ($set, $k, $v) { push @{$set->{dir_config}}, [set => $k, $v]; return }];
$TABLE{perladdvar}
    = [any => 2, 2, sub ($set, $k, $v) { push @{$set->{dir_config}}, [add => $k, $v]; return }];

%TABLE = (%TABLE, Perennial::Config::Handlers->directives);    # mod_perl's Perl*Handler ones

# A script sees them as SetEnv and PassEnv; with PerlSetupEnv Off, they are all it sees
$TABLE{perlsetenv} = [
    any => 1,
    2,
    sub ($set, $n, $v = '') { $set->{set_env}{$n} = $set->{perl_env}{$n} = $v; return }
];
$TABLE{perlpassenv} = [
    any => 1,
    undef,
    sub ($set, @names) { push @{$set->{$_}}, @names for qw(pass_env perl_pass_env); return }
];

# The reader of an On|Off directive into a setting of 1 or 0
sub _on_off ($key, $name) {
    return sub ($set, $value) {
        return "$name must be On or Off, got '$value'" unless $value =~ /\A(?:on|off)\z/i;
        $set->{$key} = lc $value eq 'on' ? 1 : 0;
        return;
    };
}

# Reads one directive into $set. Returns undef when the name is not a per-directory
# directive, '' when it was read, or the reason it is wrong. $where is 'server', 'section' or
# 'location' (a plain <Location>).
sub per_dir_directive ($set, $item, $where) {
    my $entry = $TABLE{lc $item->{name}} or return;
    my ($scope, $min, $max, $read) = @$entry;
    my @args = @{$item->{args}};
    return if $where eq 'server' && $scope eq 'inner';    # A server setting of the same name
    return "$item->{name} belongs in a section, not at server level"
        if $where eq 'server' && $scope ne 'any';
    return "$item->{name} belongs in a <Location>" if $scope eq 'location' && $where ne 'location';
    return "$item->{name} takes " . _count($min, $max)
        if @args < $min || (defined $max && @args > $max);
    my $err = $read->($set, @args) // '';

    # Where a mod_perl handler was named, for the error if it leads nowhere at start
    $set->{handler_at}{lc $item->{name}} = "$item->{file} line $item->{line}: "
        if !length $err && $item->{name} =~ /\APerl\w*Handler\z/i && $item->{file};
    return $err;
}

sub _count ($min, $max) {
    return $min == 1 ? 'one argument' : "$min arguments" if defined $max && $min == $max;
    return "$min to $max arguments"                      if defined $max;
    return $min == 1 ? 'one or more arguments' : "$min or more arguments";
}

sub _by_extension ($set, $key, $what, @extensions) {
    for my $ext (@extensions) {
        $set->{$key}{lc($ext =~ s/\A\.//r)} = $what;
    }
    return;
}

my %SECONDS_KEY = (RequestDeadline => 'request_deadline', SlowRequestTime => 'slow_request_time');

sub _seconds ($set, $name, $value) {
    return "$name must be a number of seconds (0: off), got '$value'"
        unless $value =~ /\A\d+(?:\.\d+)?\z/;
    $set->{$SECONDS_KEY{$name}} = $value;
    return;
}

# Require lines add up: a client any of them allows is let in (Apache's RequireAny)
sub _require ($set, @args) {
    my $rule = Perennial::Access->parse(@args);
    return $rule unless ref $rule;
    return 'a negated Require has no effect outside <RequireAll>' if $rule->{not};
    push @{$set->{require}}, $rule;
    return;
}

# Allow from / Deny from: all, addresses and networks, names (forward-confirmed reverse DNS),
# env=VAR and env=!VAR
sub _allow_deny ($set, $which, $from, @hosts) {
    return "\u$which takes 'from' and one or more hosts" unless lc $from eq 'from';
    for my $host (@hosts) {
        my $rule
            = lc $host eq 'all' ? {all => 1}
            : $host =~ /\Aenv=(!?)(\w+)\z/ ? ($1 ? {not => {env => [$2]}} : {env => [$2]})
            : $host =~ m{\A[\d.:/a-fA-F]+\z} && $host =~ /[\d:]/
            ? Perennial::Access->parse(ip => $host)
            : {host => [lc $host]};
        return "\u$which from: $rule" unless ref $rule;
        push @{$set->{access_compat}{$which}}, $rule;
    }
    return;
}

# Options as Apache reads them: all with + or -, a change to what is inherited; none, the
# whole set. The section keeps a list of steps, applied in order when sections are merged.
sub _options ($set, @args) {
    my @signed = grep {/\A[+-]/} @args;
    return 'Options: either all options have + or -, or none has (as Apache 2.4 requires)'
        if @signed && @signed != @args;
    my @step;
    for my $arg (@args) {
        my ($sign, $word) = $arg =~ /\A([+-]?)(\w+)\z/ or return "bad option '$arg'";
        my @names
            = lc $word eq 'all'  ? @ALL_OPTIONS
            : lc $word eq 'none' ? ()
            :                      ($OPTION{lc $word} // return "unknown option '$arg'");
        return "Options $arg: None and All cannot have + or -"
            if $sign && lc($word) =~ /\A(?:all|none)\z/;
        push @step, map { [$sign || '=', $_] } @names;
        push @step, ['=', ''] if !@names && !$sign;      # None: an empty set
    }
    push @{$set->{options}}, [@signed ? 'change' : 'replace', \@step];
    return;
}

sub _perl_options ($set, @args) {
    for my $opt (@args) {
        my ($sign, $word) = $opt =~ /\A([+-])(\w+)\z/
            or return "bad PerlOptions value '$opt' (use +Name or -Name)";
        if    (lc $word eq 'setupenv')      { $set->{setup_env}      = $sign eq '+' ? 1 : 0 }
        elsif (lc $word eq 'parseheaders')  { $set->{parse_headers}  = $sign eq '+' ? 1 : 0 }
        elsif (lc $word eq 'mergehandlers') { $set->{merge_handlers} = $sign eq '+' ? 1 : 0 }
        elsif (lc $word eq 'globalrequest') { $set->{global_request} = $sign eq '+' ? 1 : 0 }
        elsif ($word eq 'Enable')           { }
        else                                { return "PerlOptions $opt is not supported" }
    }
    return;
}

1;

__END__

=head1 NAME

Perennial::Config::PerDir - Apache's per-directory directives, in one table

=head1 SYNOPSIS

    my $err = per_dir_directive($section, $item, 'section');    # undef: not one of these

=head1 DESCRIPTION

Reads C<SetHandler>, C<PSGIApp>, C<PerlResponseHandler>/C<PerlHandler>, C<PerlScriptCheck>,
C<RequestDeadline>, C<SlowRequestTime>, C<AllowOverride None>, C<Options>, C<PerlOptions>,
C<Require>, C<DirectoryIndex>, C<DirectorySlash>, C<AddHandler>, C<AddType>, C<ForceType>,
C<SetEnv>/C<PerlSetEnv>, C<PassEnv>/C<PerlPassEnv>, C<PerlSetupEnv>, C<ErrorDocument>,
C<AddDefaultCharset>, C<CGIPassAuth>, C<PerlSetVar>, C<PerlAddVar>, C<Order>, C<Allow>,
C<Deny>, C<Satisfy>, C<AuthType>, C<AuthName>, C<AuthUserFile>, C<AuthBasicProvider file>,
C<Redirect>, C<RedirectMatch>, C<RedirectPermanent> and C<RedirectTemp> into a section's
settings. C<Options> follows Apache 2.4: options with C<+>/C<-> change what the section
inherits, options without replace it, and mixing both is an error. At server level the same
directives (except C<Require>, C<PSGIApp> and the time limits) make the base that every
section is merged onto.

=head1 FUNCTIONS

=head2 per_dir_directive

    my $err = per_dir_directive(\%settings, $item, 'server' | 'section' | 'location');

=cut
