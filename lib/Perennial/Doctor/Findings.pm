package Perennial::Doctor::Findings;
use v5.36;

# What each finding of perennial doctor means for a script under Registry, and its fix. Kinds
# that are unsafe change what a script does once it stays resident; handled ones Perennial
# takes care of after every request (ModPerl::Registry does not); notes change nothing.

my $PERLRUN = 'or run it unchanged under PerlRun: PerlResponseHandler ModPerl::PerlRun';

my %KIND = (
    global => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'the package variable %s keeps its value between requests: a request sees what'
            . ' the ones before it left (a value set only sometimes, a list that grows, a ||= that'
            . ' never runs again)',
        fix => "declare it with my inside the request, or set it on every request; $PERLRUN",
    },
    closure => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'the file-level my %s is used by a named sub, which keeps the first request\'s'
            . ' variable: later requests see its first value ("will not stay shared")',
        fix =>
            "pass it to the sub as an argument, or make it our and set it each request; $PERLRUN",
    },
    'lib-state' => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'the library\'s file-level my %s is changed by its subs and keeps its value'
            . ' between requests: the library is loaded once per worker, not once per request',
        fix => "keep the value in the script (pass it in, return it), or reset it on every request;"
            . " $PERLRUN",
    },
    'regex-o' => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'a regex with %s is compiled once per worker: every later request matches the'
            . ' first request\'s pattern',
        fix => "drop the /o flag (or use qr// once per request); $PERLRUN",
    },
    'open-handle' => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'the global handle %s stays open after the request, with any lock on it, until'
            . ' it is reopened or the worker exits',
        fix =>
            "use a lexical handle (open my \$fh ...) or close it before the request ends; $PERLRUN",
    },
    flock => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does      => 'a lock on the global handle %s is held until the handle closes, which it does'
            . ' not between requests',
        fix => "lock a lexical handle, or unlock (LOCK_UN) before the request ends; $PERLRUN",
    },
    taint => {
        level => 'note',
        does  => '%s is ignored: taint mode belongs to the whole interpreter',
        fix   => 'run it under CGI (mod_cgi\'s mode: SetHandler cgi-script) to keep taint checks',
    },
    sig => {
        level => 'handled',
        does  => '%s is changed: Perennial puts every handler back after the request',
        fix   => 'nothing to change',
    },
    chdir => {
        level => 'handled',
        does  => '%s changes the working directory: Perennial puts it back after the request',
        fix   => 'nothing to change',
    },
    umask => {
        level => 'handled',
        does  => '%s changes the umask: Perennial puts it back after the request',
        fix   => 'nothing to change',
    },
    dollar0 => {
        level => 'handled',
        does  => '%s is set: the script gets its own copy, and the worker keeps its name',
        fix   => 'nothing to change',
    },
    exit => {
        level => 'handled',
        does  => '%s ends the request, not the worker',
        fix   => 'nothing to change',
    },
    'hard-exit' => {
        level     => 'unsafe',
        unsafe_in => [qw(registry perlrun)],
        does      => '%s ends the worker, not the request: the client gets a 500, and the worker'
            . ' with all it compiled is replaced',
        fix =>
            'use exit (Perennial ends the request with it), or run it under CGI (mod_cgi\'s mode:'
            . ' SetHandler cgi-script)',
    },
    output => {
        level     => 'unsafe',
        unsafe_in => ['registry'],
        does => '%s differs from the answer a fresh interpreter gives to the same request: what'
            . ' it answers depends on the requests the worker served before',
        fix => "find what keeps its value (the findings beside this one) and set it on every"
            . " request; $PERLRUN",
    },
    leak => {
        level     => 'unsafe',
        unsafe_in => [qw(registry perlrun)],
        does      => '%s changed by the script stays changed for the scripts the worker runs next',
        fix       => 'put it back before the request ends (local, or close what was opened), or run'
            . ' it under CGI (mod_cgi\'s mode: SetHandler cgi-script)',
    },
    'relative-require' => {
        level => 'unsafe',
        does => 'require "%s" is looked for from the server\'s directory: this handler does not run'
            . ' scripts in their own directory (as mod_perl 2\'s does not), so the script fails',
        fix => 'serve it with ModPerl::RegistryPrefork or ModPerl::PerlRunPrefork (which do), or'
            . ' require "$FindBin::Bin/..." (use FindBin)',
    },
    'not-executable' => {
        level     => 'unsafe',
        unsafe_in => ['cgi'],
        does      => '%s is not executable: mod_cgi\'s mode answers 403 for it',
        fix       => 'chmod +x it, or serve it with ModPerl::PerlRun or Registry',
    },
    run => {
        level => 'note',
        does  => 'it could not be run for the dynamic evidence: %s',
        fix   => 'run it by hand under PerlRun and Registry, with the requests it gets',
    },
    compile => {
        level     => 'unsafe',
        unsafe_in => [qw(registry perlrun cgi)],
        does      => 'it does not compile: %s',
        fix       => 'run perl -c on it, with the @INC and environment it runs with',
    },
);

# The modes a script can run in: Registry keeps it, PerlRun compiles it for every request in a
# package emptied after it, CGI starts a new perl
sub modes () {qw(cgi perlrun registry)}

# The finding with its meaning: {kind, line, name, level, does, fix}
sub explain ($finding) {
    my $kind = $KIND{$finding->{kind}} // die "no such finding: $finding->{kind}\n";
    return {
        %$finding,
        level => $kind->{level},
        does  => sprintf($kind->{does}, $finding->{name}),
        fix   => $kind->{fix},
    };
}

# Whether a finding makes the script unsafe in $mode, served by $handler (a finding that depends
# on the handler names those it is unsafe with)
sub unsafe_in ($mode, $finding, $handler = undef) {
    return 0 if $finding->{handlers} && !grep { $_ eq ($handler // '') } @{$finding->{handlers}};
    my $modes = $finding->{unsafe_in} // $KIND{$finding->{kind}}{unsafe_in} // [];
    return scalar grep { $_ eq $mode } @$modes;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Findings - what each of perennial doctor's findings means, and its fix

=head1 SYNOPSIS

    my $explained = Perennial::Doctor::Findings::explain({kind => 'global', line => 5, name => '$user'});
    print "$explained->{does}; fix: $explained->{fix}\n";
    exit 1 if Perennial::Doctor::Findings::unsafe_in('registry', $explained);

=head1 DESCRIPTION

Each kind of finding has a level: C<unsafe> (the script behaves differently once resident),
C<handled> (Perennial puts it back after each request) or C<note>. Under Registry the unsafe
ones are unsafe; under PerlRun (compiled for every request, its package emptied after) and CGI
none is, except a script that does not compile. Each kind lists the modes it is unsafe in.

=cut
