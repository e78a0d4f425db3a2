package Perennial::Executor::Inc;
use v5.36;
use Config;
use Perennial::Twins;

# A resident script's share of %INC. Files it requires that are not modules (`require "lib.pl"`,
# or a .pm with no package statement) are its own: they are in %INC only while it runs, so
# another script that requires a file of the same name gets its own copy (mod_cgi's behaviour;
# under ModPerl::Registry the second script silently gets nothing). What it depends on from
# outside perl's own library directories is recorded by Perennial::Executor::Libraries, so that
# a changed library recompiles the script. Noticing what is new costs a count of %INC's keys per
# request; the keys are walked only when the count changed.

my @SYSTEM;        # Perl's own library directories, once init has asked
my %KNOWN;         # The %INC keys that were there at the last look (shared modules)
my $COUNT = -1;    # How many

# The C ones (xs/Inc.xs) compare %INC with the known keys where they lie; the Perl twins below
# make an SV of every key, which a worker pays for in copied pages (docs/design-notes.md)
Perennial::Twins::install(__PACKAGE__, qw(new_keys sync_known));

sub pp_new_keys ($inc, $known) {
    return grep { !exists $known->{$_} } keys %$inc;
}

sub pp_sync_known ($inc, $known) {
    %$known = map { $_ => 1 } keys %$inc;
    return;
}

# Once per process, before scripts run (the executor calls it in the manager, so that no
# server without scripts, and no worker, starts a perl to ask)
sub init () {
    @SYSTEM = _perl_dirs() unless @SYSTEM;
    return;
}

# True for a file under perl's own library directories (core, vendor, site)
sub perls_own ($path) {
    init();
    return scalar grep { index($path, "$_/") == 0 } @SYSTEM;
}

# Before a script runs or compiles: its own files are back in %INC
sub enter ($script = undef) {
    sync() if keys %INC != $COUNT;
    my $own = $script && $script->{own} or return;
    @INC{keys %$own} = values %$own; ## no critic (RequireLocalizedPunctuationVars) %INC, on purpose
    return;
}

# After a script ran or compiled: what it loaded is noticed, and its own files leave %INC.
# $dir is the directory relative paths in %INC were loaded from. Returns the keys that are new
# (for the libraries a kept script depends on: Perennial::Executor::Libraries).
sub leave ($script, $dir) {
    delete @INC{keys %{$script->{own}}} if $script->{own};
    return                              if keys %INC == $COUNT;
    my @new = new_keys(\%INC, \%KNOWN);
    _own_or_known($script, $dir, $_) for @new;
    $COUNT = keys %INC;
    return @new;
}

# A key new in %INC: the script's own file (not a module, or a .pm without a package), out of
# %INC, or a module, known from now on
sub _own_or_known ($script, $dir, $key) {
    my $path = $INC{$key};
    $path = "$dir/$path" if defined $path && !ref $path && $path !~ m{\A/};
    my $lib = defined $path && !ref $path && !perls_own($path);
    if ($key !~ /\.pm\z/ || ($lib && !_has_package($path))) {
        $script->own_file($key, delete $INC{$key});
    }
    else { $KNOWN{$key} = 1 }
    return;
}

# Libraries changed on disk leave %INC, so that the script compiled again loads them again
sub forget (@keys) {
    return unless @keys;
    delete @INC{@keys};
    delete @KNOWN{@keys};
    $COUNT = -1;
    return;
}

# What is in %INC now is known: the modules loaded before a script ran are not its own. The
# manager calls this before it forks, so that the workers share the list.
sub sync () {
    sync_known(\%INC, \%KNOWN);
    $COUNT = keys %INC;
    return;
}

# Perl's own library directories: those of its build configuration and the @INC it starts
# with (Debian adds /etc/perl and perl-base), asked of a perl with no PERL5LIB, once
sub _perl_dirs () {
    my @dirs = map { $Config{$_} // '' }
        qw(privlibexp archlibexp sitelibexp sitearchexp vendorlibexp vendorarchexp);
    delete local @ENV{qw(PERL5LIB PERLLIB PERL5OPT)};
    if (open(my $perl, '-|', $^X, '-e', 'print "$_\n" for @INC')) {
        push @dirs, map { chomp; $_ } <$perl>;
        close $perl;
    }
    my %seen;
    return grep { m{\A/.} && !$seen{$_}++ } map {s{/+\z}{}r} @dirs;
}

# A .pm file with no package statement is a library loaded into the package of the script
# that requires it (AWStats' lib/*.pm): that script's own, as a "lib.pl" is. Read once, when
# it is first loaded.
sub _has_package ($path) {
    open(my $fh, '<', $path) or return 1;
    while (my $line = <$fh>) {
        return 1 if $line =~ /\A\s*package\s+[A-Za-z_]/;
        last     if $line =~ /\A__(?:END|DATA)__\s*\z/;
    }
    return 0;
}

1;

__END__

=head1 NAME

Perennial::Executor::Inc - a resident script's own files in %INC, and the libraries it loaded

=head1 SYNOPSIS

    Perennial::Executor::Inc::enter($script);
    $script->{code}->();
    Perennial::Executor::Inc::leave($script, $script_dir);
    ...
    my @new = Perennial::Executor::Inc::leave($script, $dir);    # what it loaded
    Perennial::Executor::Inc::forget(@changed_libraries);        # loaded again by the next compile

=head1 DESCRIPTION

Keeps, through L<Perennial::Script>'s C<own_file> and C<depends_on>, C<< $script->{own} >>
(the non-module files the script required, with their C<%INC> values) and
C<< $script->{deps} >> (the files it depends on from outside perl's own library
directories: L<Perennial::Executor::Libraries>). Own files are in C<%INC> only while their script runs,
so two scripts that each C<require "config.pl"> from their own directories each get theirs.
Files under perl's installation directories (C<privlib>, C<archlib>, C<sitelib>,
C<vendorlib> ..., and the C<@INC> perl starts with when no C<PERL5LIB> is set) are not
watched: upgrading those needs a restart, as for any module loaded in the manager.

=head1 METHODS

=head2 enter

    Perennial::Executor::Inc::enter($script);    # or enter() before a compile

Functions, not methods: they run on every script request.

=head2 forget

    Perennial::Executor::Inc::forget(@keys);

Takes libraries out of C<%INC> (they changed on disk), so that the next compile loads them.

=head2 init

    Perennial::Executor::Inc::init();

Finds perl's own library directories (one short-lived perl without PERL5LIB): files under them
are never watched.

=head2 leave

    my @new = Perennial::Executor::Inc::leave($script, $dir);

The C<%INC> keys that are new since the last look; the script's own files among them are out
of C<%INC> again.

=head2 new_keys

    my @new = Perennial::Executor::Inc::new_keys(\%INC, \%known);

The keys of the first hash that the second lacks. In C, the keys are compared where they lie,
without an SV made of each (see L</sync>).

=head2 perls_own

    next if Perennial::Executor::Inc::perls_own($INC{'CGI.pm'});

True for a file in perl's own library directories, which are never watched or reloaded.

=head2 sync

    Perennial::Executor::Inc::sync();    # in the manager, before the workers fork

Notes every key of C<%INC> as a module loaded before any script: a script's own files and
dependencies are what appears after. C<enter> does it again whenever C<%INC> changed. Done in
the manager, the workers share the list; done in a worker, the Perl twin's list of ~300 keys
would raise and lower the count of users of each key's text in perl's string table, spread
over the heap the workers share, and copy a page for each (about 1.2 MB a worker). The C
(xs/Inc.xs) touches only the keys that are new or gone.

=head2 sync_known

    Perennial::Executor::Inc::sync_known(\%INC, \%known);

Makes the second hash's keys those of the first, each with the value 1.

=cut
