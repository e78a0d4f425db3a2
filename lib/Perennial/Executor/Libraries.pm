package Perennial::Executor::Libraries;
use v5.36;
use Time::HiRes ();
use Perennial::Twins;
use Perennial::Executor::Inc ();

# The site's libraries a resident script depends on: those it requires, those they require,
# and so on, outside perl's own library directories, however often the script compiled again
# and whichever script loaded them first in the worker. Each is watched by its stamp (the
# modification time to the fraction of a second the file system keeps, the size and the
# inode), so an edit within the second of the compile is seen. A changed one recompiles every
# script that depends on it, and is loaded again once, with the libraries that require it.
#
# What a file requires is known from its compile: xs/Libraries.xs notes every `use` and
# `require` of a constant name in %REQUIRES. Without the C build every library loaded counts as
# required by every script (more compiles than needed after an edit, never fewer).

our %REQUIRES;    # A compiled file, as perl names it => {name it requires => 1} (the C's)
my %LOADED;       # A library's path => its stamp when this process loaded it
my %LOOKED;       # A library's path => [stamp, time] of its last look (PerlScriptCheck SECONDS)

my $OURS = qr{\A(?:Perennial|Plack/Handler/Perennial)\b};    # Perennial's own modules

our $IMPLEMENTATION = Perennial::Twins::install(__PACKAGE__, qw(required_by));

# The names a file requires: those the compiler noted, or, in Perl, every one loaded
sub xs_required_by ($file) { keys %{$REQUIRES{$file} // {}} }
sub pp_required_by ($file) { keys %INC }

# A file's stamp: '' when it is gone
sub stamp ($path) {
    my @st = Time::HiRes::stat($path) or return '';
    return sprintf '%.9f %d %d', @st[9, 7, 1];
}

# The libraries loaded before any script ran (the manager's, before it forks) are stamped as
# they are now, so that an edit before a worker's first script is seen
sub stamp_loaded () {
    for my $raw (values %INC) {
        next if !defined $raw || ref $raw || $raw !~ m{\A/} || _perls($raw);
        $LOADED{$raw} //= stamp($raw);
    }
    return;
}

# A script compiled again starts its list of requires afresh
sub compiling ($file) {
    delete $REQUIRES{$file};
    return;
}

# After a kept script compiled ($file, its name) or ran: the libraries it depends on, from what
# it requires and the %INC keys that are new (Perennial::Executor::Inc's leave); $dir, where
# relative paths were loaded from. Returns how many it did not depend on before.
sub record ($script, $dir, $file, @new) {
    my (%seen, @todo);
    my $before = keys %{$script->{deps} // {}};
    my $add    = sub ($key) {
        return if $seen{$key}++ || $key =~ $OURS;
        my $raw = $INC{$key} // ($script->{own} && $script->{own}{$key});
        return unless defined $raw && !ref $raw;
        my $path = $raw =~ m{\A/} ? $raw : "$dir/$raw";
        return if _perls($path);
        $script->depends_on($key, $path, $LOADED{$path} //= stamp($path), $raw);
        push @todo, $raw;
    };
    my @first = ((defined $file ? required_by($file) : ()), @new);
    $add->($_) for @first;
    while (defined(my $raw = shift @todo)) { $add->($_) for required_by($raw) }
    return scalar(keys %{$script->{deps} // {}}) - $before;
}

# The %INC keys of a script's libraries that changed since it compiled (each looked at once a
# check, or once in $seconds for all the scripts of the process), and of those to load again:
# the changed ones that no other script has loaded again since, and what requires them
sub changed ($script, $seconds = 0) {
    my $deps = $script->{deps} or return ([], []);
    my (%now, @changed);
    while (my ($key, $dep) = each %$deps) {
        $now{$dep->[0]} //= _look($dep->[0], $seconds);
        push @changed, $key if $now{$dep->[0]} ne $dep->[1];
    }
    return ([], []) unless @changed;

    # Not loaded again yet: the changed libraries, and those of the script's that require them
    my %stale = map { $_ => 1 }
        grep { ($LOADED{$deps->{$_}[0]} // '') ne $now{$deps->{$_}[0]} } @changed;
    if (%stale) {
        $stale{$_} = 1 for grep { !$stale{$_} && _reaches($deps->{$_}[2], \%stale) } keys %$deps;
    }
    for my $key (keys %stale) {
        delete $LOADED{$deps->{$key}[0]};
        delete $REQUIRES{$deps->{$key}[2]};
    }
    return ([sort @changed], [sort keys %stale]);
}

# Whether a file requires one of the keys, itself or through what it requires
sub _reaches ($raw, $keys) {
    my (%seen, @todo);
    @todo = ($raw);
    while (defined(my $file = shift @todo)) {
        next if $seen{$file}++;
        for my $key (required_by($file)) {
            return 1 if $keys->{$key};
            push @todo, $INC{$key} if defined $INC{$key} && !ref $INC{$key};
        }
    }
    return 0;
}

sub _perls ($path) { Perennial::Executor::Inc::perls_own($path) }

sub _look ($path, $seconds) {
    my $last = $LOOKED{$path};
    return $last->[0] if $seconds && $last && $last->[1] + $seconds > time;
    my $stamp = stamp($path);
    $LOOKED{$path} = [$stamp, time] if $seconds;
    return $stamp;
}

1;

__END__

=head1 NAME

Perennial::Executor::Libraries - the site libraries a resident script depends on, and which changed

=head1 SYNOPSIS

    Perennial::Executor::Libraries::compiling($file);         # before a script compiles
    Perennial::Executor::Libraries::record($script, $dir, $file, @new_keys);
    my ($changed, $reload) = Perennial::Executor::Libraries::changed($script, $seconds);

=head1 DESCRIPTION

A Registry script is compiled again when any site library it depends on changes: the files it
requires, the modules it uses from outside perl's own library directories, and what those
require in turn, however many times it compiled and whichever script loaded them first in the
worker. The C part (F<xs/Libraries.xs>) notes, as perl compiles each file, the names it
requires by a constant (C<use Foo>, C<require "lib.pl">): a C<use> of a module that is loaded
already leaves nothing else behind. A library is watched by its stamp: modification time to
the fraction of a second, size and inode.

After an edit, the first script that looks finds the library changed, takes it out of C<%INC>
(with the libraries that require it, so that they require it again) and compiles again, which
loads it. Every other script that depends on it compiles again when it looks, and finds it
loaded. Each library is looked at once a check: every request under C<PerlScriptCheck Always>,
once in the interval for all the scripts of a worker under C<PerlScriptCheck SECONDS>, never
under C<Never>.

Without the C build, every library loaded when a script compiled counts as one it depends on.

=head1 FUNCTIONS

=head2 stamp

    my $stamp = Perennial::Executor::Libraries::stamp($path);    # '' when gone

=head2 stamp_loaded

    Perennial::Executor::Libraries::stamp_loaded();    # in the manager, before it forks

The libraries loaded so far (absolute paths in C<%INC>, not perl's own), stamped as they are.

=head2 compiling

    Perennial::Executor::Libraries::compiling($file);

Forgets what the file required: it is compiling again.

=head2 record

    Perennial::Executor::Libraries::record($script, $dir, $file, @new_keys);

Records in C<$script> (C<depends_on>) the libraries it depends on.

=head2 changed

    my ($changed, $reload) = Perennial::Executor::Libraries::changed($script, $seconds);

The C<%INC> keys of its libraries that changed, and of those that must be loaded again.

=cut
