package Perennial::Config::Handlers;
use v5.36;
use Perennial::ModPerl::Handler;

# mod_perl's Perl*Handler directives, as per-directory directives of Perennial::Config::PerDir:
# PerlResponseHandler naming ModPerl::Registry or the like chooses a script executor (a
# policy); any other name is a handler module, a list as each phase's. The phases that need
# Apache's own machinery are refused by name, with the reason.

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

sub handler_policy ($name) { $HANDLERS{$name} }

# mod_perl's request phases in Apache's order, each a list of handlers: the settings key, the
# directive, and whether the phase stops at the first handler that does not decline
# (RUN_FIRST) rather than running them all. PerlInitHandler in a section is the header parser's
# list, as in mod_perl; PerlPostReadRequestHandler runs first, after the URL is mapped
# (Perennial maps it before any Perl code runs).
my @PHASES = (
    [perl_post_read     => PerlPostReadRequestHandler => 0],
    [perl_header_parser => PerlHeaderParserHandler    => 0],
    [perl_access        => PerlAccessHandler          => 0],
    [perl_authen        => PerlAuthenHandler          => 1],
    [perl_authz         => PerlAuthzHandler           => 1],
    [perl_type          => PerlTypeHandler            => 1],
    [perl_fixup         => PerlFixupHandler           => 0],
    [perl_response      => PerlResponseHandler        => 1],
    [perl_log           => PerlLogHandler             => 0],
    [perl_cleanup       => PerlCleanupHandler         => 0],
);
my %DIRECTIVE = map { $_->[0] => $_->[1] } @PHASES;
my %RUN_FIRST = map { $_->[0] => $_->[2] } @PHASES;

# The settings keys of the phases, in order; the directive that names one; whether it is
# RUN_FIRST
sub phase_keys () {
    map { $_->[0] } @PHASES;
}
sub directive_of ($key) { $DIRECTIVE{$key} }
sub runs_first   ($key) { $RUN_FIRST{$key} }

# Phases that need Apache's own machinery: refused by name, with why
my %REFUSED = (
    PerlTransHandler => 'Perennial maps URLs to files itself (Alias, ScriptAlias, DocumentRoot); '
        . 'a handler cannot change the mapping',
    PerlMapToStorageHandler =>
        'Perennial maps URLs to files itself; use <Location> with SetHandler modperl to skip files',
    PerlInputFilterHandler       => "mod_perl filters need Apache's bucket brigades",
    PerlOutputFilterHandler      => "mod_perl filters need Apache's bucket brigades",
    PerlSetInputFilter           => 'Apache filters are not applied',
    PerlSetOutputFilter          => 'Apache filters are not applied',
    PerlProcessConnectionHandler => "a protocol handler needs Apache's connection; Perennial "
        . 'speaks HTTP on every connection',
    PerlPreConnectionHandler => "a connection handler needs Apache's connection; Perennial "
        . 'speaks HTTP on every connection',
);

# name => [where, min, max, reader], as Perennial::Config::PerDir's table has them
sub directives ($class) {
    my %table = (
        perlresponsehandler => [any => 1, undef, \&_response_handler],
        perlhandler         => [any => 1, undef, \&_response_handler],
    );
    for my $phase (grep { $_->[0] ne 'perl_response' } @PHASES) {
        my $key = $phase->[0];
        $table{lc $phase->[1]}
            = [any => 1, undef, sub ($set, @names) { _phase_handlers($set, $key, @names) }];
    }
    $table{perlinithandler} = $table{perlheaderparserhandler};
    for my $name (keys %REFUSED) {
        my $why = "$name is not supported: $REFUSED{$name}";
        $table{lc $name} = [any => 0, undef, sub ($set, @args) {$why}];
    }
    return %table;
}

# ModPerl::Registry and the like choose an executor; any other name is a handler module
sub _response_handler ($set, @names) {
    if ($HANDLERS{$names[0]}) {
        return "$names[0] is the only handler a PerlResponseHandler naming it may have"
            if @names > 1;
        delete $set->{perl_response};
        $set->{response_handler} = $names[0];
        return;
    }
    return "unknown handler '$names[0]' (known: @{[sort keys %HANDLERS]}; mod_perl's other "
        . 'ModPerl:: modules work only inside Apache)'
        if $names[0] =~ /\AModPerl::/;
    my $err = _phase_handlers($set, 'perl_response', @names);
    $set->{response_handler} = $names[0] unless $err;
    return $err;
}

# The handlers of a phase, in the order named (one directive or several in a section)
sub _phase_handlers ($set, $key, @names) {
    for my $name (@names) {
        return "'$name' is not a handler: a module (My::Handler), a sub (My::Handler::run) "
            . 'or a method (My::Handler->run)'
            unless Perennial::ModPerl::Handler->is_name($name);
    }
    push @{$set->{$key}}, @names;
    return;
}

1;

__END__

=head1 NAME

Perennial::Config::Handlers - mod_perl's Perl*Handler directives

=head1 SYNOPSIS

    my %table  = Perennial::Config::Handlers->directives;
    my $policy = Perennial::Config::Handlers::handler_policy('ModPerl::Registry');
    my @keys   = Perennial::Config::Handlers::phase_keys();    # perl_post_read ... perl_cleanup

=head1 DESCRIPTION

C<PerlResponseHandler>/C<PerlHandler>: C<ModPerl::Registry>, C<ModPerl::RegistryPrefork>,
C<ModPerl::RegistryBB>, C<ModPerl::PerlRun>, C<ModPerl::PerlRunPrefork>, C<Apache::Registry>,
C<Apache::PerlRun> and Perennial's own C<Perennial::Registry>/C<Perennial::PerlRun> choose a
script executor (C<handler_policy> gives its mode and whether it changes directory); any
other name is a handler module (C<perl_response>). The phase directives (C<PerlInitHandler>
is the header parser's list) each add to their list in the section (C<perl_access> ...);
C<PerlTransHandler>, C<PerlMapToStorageHandler>, the filter directives and the connection
handlers are refused with the reason. Handler names are checked to be Perl names here, and
found at start (L<Perennial::ModPerl::Handler>).

=head1 FUNCTIONS

=head2 directives, directive_of, handler_policy, phase_keys, runs_first

=cut
