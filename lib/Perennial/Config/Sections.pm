package Perennial::Config::Sections;
use v5.36;
use Exporter qw(import);
use Perennial::Access;

# The parts of httpd.conf that map URLs to code: <Location> and <Directory> sections, Alias
# and ScriptAlias, and the mod_perl directives that go with them. Reads parsed items into plain
# data for Perennial::Config; Perennial::App builds the applications from that data.

our @EXPORT_OK = qw(handler_policy section server_directive);

# mod_perl's handler names, and Perennial's own, as executor policies
my %HANDLERS = (
    'ModPerl::Registry'        => {mode => 'registry', chdir => 0},
    'ModPerl::RegistryPrefork' => {mode => 'registry', chdir => 1},
    'ModPerl::RegistryBB'      => {mode => 'registry', chdir => 0, check => 'never'},
    'ModPerl::PerlRun'         => {mode => 'perlrun',  chdir => 0},
    'ModPerl::PerlRunPrefork'  => {mode => 'perlrun',  chdir => 1},
    'Apache::Registry'         => {mode => 'registry', chdir => 1},
    'Apache::PerlRun'          => {mode => 'perlrun',  chdir => 1},
    'Perennial::Registry'      => {mode => 'registry', chdir => 1},
    'Perennial::PerlRun'       => {mode => 'perlrun',  chdir => 1},
);
my %SECONDS_KEY = (RequestDeadline => 'request_deadline', SlowRequestTime => 'slow_request_time');
my %SET_HANDLER = map { $_ => 1 } qw(psgi perl-script cgi-script server-status perl-status);

sub handler_policy ($name) { $HANDLERS{$name} }

# <Location /path> and <Directory /dir>: the settings inside, with where they were written
sub section ($values, $errors, $item) {
    my $where = "$item->{file} line $item->{line}";
    my $kind  = lc $item->{section};
    if ($kind ne 'location' && $kind ne 'directory') {
        push @$errors, "$where: <$item->{section}> is not supported";
        return;
    }
    my $name = $kind eq 'location' ? 'Location' : 'Directory';
    if (@{$item->{args}} != 1 || $item->{args}[0] !~ m{\A/}) {
        push @$errors, "$where: <$name> takes one path starting with /";
        return;
    }
    my $sec
        = {kind => $kind, path => $item->{args}[0], file => $item->{file}, line => $item->{line}};
    for my $inner (@{$item->{items}}) {
        my $err
            = $inner->{section}
            ? "<$inner->{section}> cannot be inside <$name>"
            : _inner_directive($sec, $inner);
        push @$errors, "$inner->{file} line $inner->{line}: $err" if $err;
    }
    push @$errors,               _handler_errors($sec, "$where: <$name $sec->{path}>");
    push @{$values->{sections}}, $sec;
}

# What a section's SetHandler needs, and where it may be
sub _handler_errors ($sec, $where) {
    my $h      = $sec->{handler} // '';
    my $in_dir = $sec->{kind} eq 'directory';
    my @errors;
    push @errors, "$where with SetHandler psgi needs PSGIApp" if $h eq 'psgi' && !$sec->{app};
    push @errors, "$where with SetHandler perl-script needs PerlResponseHandler"
        if $h eq 'perl-script' && !$sec->{response_handler};
    push @errors, "$where cannot mount a PSGIApp (use <Location>)"
        if $h eq 'psgi' && $in_dir;
    push @errors, "$where: SetHandler $h belongs in a <Location>, not a <Directory>"
        if $h =~ /status\z/ && $in_dir;
    return @errors;
}

# Server-level directives with several arguments. Returns undef when the name is not one.
sub server_directive ($values, $item) {
    my $name = lc $item->{name};
    my @args = @{$item->{args}};
    if ($name eq 'alias' || $name eq 'scriptalias') {
        return "$item->{name} takes a URL path and a directory" if @args != 2 || $args[0] !~ m{\A/};
        push @{$values->{aliases}},
            {
            url    => $args[0],
            dir    => $args[1],
            script => $name eq 'scriptalias' ? 1 : 0,
            file   => $item->{file},
            line   => $item->{line}
            };
        return '';
    }
    if ($name eq 'perlrequire') {
        return 'PerlRequire takes one or more files' unless @args;
        push @{$values->{requires}}, @args;
        return '';
    }
    if ($name eq 'loadmodule') {
        push @{$values->{notes}},
            "$item->{file} line $item->{line}: LoadModule ignored: Perennial has no Apache modules";
        return '';
    }
    return _extended_status($values, $item) if $name eq 'extendedstatus';
    if ($name eq 'allowoverride') {
        return
            "AllowOverride $args[0] is not supported: Perennial reads no .htaccess files (use None)"
            if @args != 1 || lc $args[0] ne 'none';
        return '';
    }
    my $err = _env_directive($values, $name, \@args);
    return $err;
}

sub _extended_status ($values, $item) {
    my @args = @{$item->{args}};
    return 'ExtendedStatus must be On or Off' if @args != 1 || $args[0] !~ /\A(?:on|off)\z/i;
    push @{$values->{notes}},
        "$item->{file} line $item->{line}: ExtendedStatus Off ignored: "
        . 'the per-worker figures cost no system call and are always kept'
        if lc $args[0] eq 'off';
    return '';
}

sub _env_directive ($target, $name, $args) {
    if ($name eq 'perlsetenv' || $name eq 'setenv') {
        return "\u$name takes a name and a value" if @$args < 1 || @$args > 2;
        $target->{set_env}{$args->[0]} = $args->[1] // '';
        return '';
    }
    if ($name eq 'perlpassenv' || $name eq 'passenv') {
        return "\u$name takes one or more variable names" unless @$args;
        push @{$target->{pass_env}}, @$args;
        return '';
    }
    if ($name eq 'perlsetupenv') {
        return 'PerlSetupEnv must be On or Off' if @$args != 1 || $args->[0] !~ /\A(?:on|off)\z/i;
        $target->{setup_env} = lc $args->[0] eq 'on' ? 1 : 0;
        return '';
    }
    return;
}

# One-argument directives inside a section: each sets its key or says what is wrong
my %INNER;
%INNER = (
    sethandler => sub ($sec, $value) {
        return "SetHandler '$value' is not supported "
            . '(psgi, perl-script, cgi-script, server-status or perl-status)'
            unless $SET_HANDLER{lc $value};
        $sec->{handler} = lc $value;
        return;
    },
    psgiapp             => sub ($sec, $value) { $sec->{app} = $value; return },
    perlresponsehandler => sub ($sec, $value) {
        return "unknown handler '$value' (known: @{[sort keys %HANDLERS]})"
            unless $HANDLERS{$value};
        $sec->{response_handler} = $value;
        return;
    },
    perlscriptcheck => sub ($sec, $value) {
        return "PerlScriptCheck must be Always, Never or a number of seconds, got '$value'"
            unless $value =~ /\A(?:always|never|\d+)\z/i;
        $sec->{script_check} = lc $value;
        return;
    },
    requestdeadline => sub ($sec, $value) { _seconds($sec, RequestDeadline => $value) },
    slowrequesttime => sub ($sec, $value) { _seconds($sec, SlowRequestTime => $value) },
    allowoverride   => sub ($sec, $value) {
        return lc $value eq 'none'
            ? undef
            : "AllowOverride $value is not supported: Perennial reads no .htaccess files (use None)";
    },
);
$INNER{perlhandler} = $INNER{perlresponsehandler};

sub _inner_directive ($sec, $item) {
    my $name = lc $item->{name};
    my @args = @{$item->{args}};
    my $env  = _env_directive($sec, $name, \@args);
    return $env || undef                      if defined $env;
    return _require($sec, \@args)             if $name eq 'require';
    return _options($sec, \@args)             if $name eq 'options';
    return _perl_options($sec, \@args)        if $name eq 'perloptions';
    return "$item->{name} takes one argument" if @args != 1;
    my $set = $INNER{$name} or return "unknown directive '$item->{name}' inside <\u$sec->{kind}>";
    return $set->($sec, $args[0]);
}

# Require lines add up: a client any of them allows is let in (Apache's RequireAny)
sub _require ($sec, $args) {
    my $rule = Perennial::Access->parse(@$args);
    return $rule unless ref $rule;
    push @{$sec->{require}}, $rule;
    return;
}

sub _seconds ($sec, $name, $value) {
    return "$name must be a number of seconds (0: off), got '$value'"
        unless $value =~ /\A\d+(?:\.\d+)?\z/;
    $sec->{$SECONDS_KEY{$name}} = $value;
    return;
}

sub _options ($sec, $args) {
    for my $opt (@$args) {
        my ($sign, $word) = $opt =~ /\A([+-]?)(\w+)\z/ or return "bad option '$opt'";
        $word = lc $word;
        if    ($word eq 'execcgi') { $sec->{exec_cgi} = $sign eq '-' ? 0 : 1 }
        elsif ($word eq 'none')    { $sec->{exec_cgi} = 0 }
        elsif ($word eq 'all')     { $sec->{exec_cgi} = 1 }
        elsif ($word
            =~ /\A(?:followsymlinks|symlinksifownermatch|indexes|multiviews|includes|includesnoexec)\z/
            )
        {
        }
        else { return "unknown option '$opt'" }
    }
    return;
}

sub _perl_options ($sec, $args) {
    for my $opt (@$args) {
        my ($sign, $word) = $opt =~ /\A([+-])(\w+)\z/
            or return "bad PerlOptions value '$opt' (use +Name or -Name)";
        if    (lc $word eq 'setupenv')     { $sec->{setup_env} = $sign eq '+' ? 1 : 0 }
        elsif (lc $word eq 'parseheaders') { $sec->{parse_headers} = $sign eq '+' ? 1 : 0 }
        elsif ($word =~ /\A(?:GlobalRequest|Enable|MergeHandlers)\z/) { }
        else { return "PerlOptions $opt is not supported" }
    }
    return;
}

1;

__END__

=head1 NAME

Perennial::Config::Sections - <Location>, <Directory>, Alias and the mod_perl directives

=head1 SYNOPSIS

    use Perennial::Config::Sections qw(section server_directive);
    section(\%values, \@errors, $item) if $item->{section};

=head1 DESCRIPTION

Reads the URL-mapping part of an httpd.conf: C<Alias> and C<ScriptAlias>, C<< <Location> >>
and C<< <Directory> >> with C<SetHandler psgi|perl-script|cgi-script>, C<PSGIApp>,
C<Require all granted|denied>, C<Require local>, C<Require ip ...> (L<Perennial::Access>),
C<< <Location> >> with C<SetHandler server-status|perl-status> (L<Perennial::Status>),
C<PerlResponseHandler>/C<PerlHandler> (ModPerl::Registry, ModPerl::RegistryPrefork,
ModPerl::RegistryBB, ModPerl::PerlRun, ModPerl::PerlRunPrefork, Apache::Registry,
Apache::PerlRun, Perennial::Registry, Perennial::PerlRun), C<Options [+-]ExecCGI>,
C<PerlOptions [+-]ParseHeaders [+-]SetupEnv>, C<PerlSetupEnv>, C<PerlSetEnv>/C<SetEnv>,
C<PerlPassEnv>/C<PassEnv>, C<PerlScriptCheck Always|Never|SECONDS>, and at server level
C<PerlRequire>, C<LoadModule> (ignored, with a note), C<AllowOverride None> and
C<ExtendedStatus On|Off> (accepted; Off is ignored with a note, because the per-worker figures
cost nothing). C<Require> lines in a C<< <Directory> >> apply to the locations serving it; a
C<< <Location> >>'s own lines replace them (Apache's default C<AuthMerging Off>).

=head1 FUNCTIONS

=head2 handler_policy

    my $policy = handler_policy('ModPerl::Registry');    # {mode => 'registry', chdir => 0}

=head2 section

    section(\%values, \@errors, $item);

=head2 server_directive

    my $err = server_directive(\%values, $item);    # undef: not one of these

=cut
