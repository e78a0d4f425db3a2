package Perennial::Executor::Compiler;
use v5.36;
use Perennial::Executor::Blocks;
use Perennial::Executor::Compiler::Fresh;

# Turns a CGI script's source into a code reference in its own package: the shebang's -w
# becomes `use warnings`, `#line` keeps error line numbers true to the file, the text after
# __END__ or __DATA__ is kept for a per-request DATA handle, and the END blocks the script
# declares are taken out of perl's global list so the executor can run them after each request.
# A `format STDOUT` it declares is kept with it, for its STDOUT on each request (a format is
# the glob's, and each request's STDOUT is a glob of its own).
# CHECK and INIT blocks, which perl only queues ("Too late to run INIT block") when code is
# compiled at run time, run once the script has compiled, as they would in a new perl: a CHECK
# block at the start of a line becomes a UNITCHECK block (run, last first, at the end of the
# script's compilation; perl gives no access to its live CHECK queue), and the INIT blocks are
# taken from perl's queue and run after it.

# %args: path, package, source; closures: perl's "will not stay shared" warnings on even for a
# script that has no warnings of its own (they are given at compile time only, to the log);
# texts: the caller's hash of what each text said (see _read), for a caller that compiles the
# same text again and again (PerlRun)
sub compile ($class, %args) {
    my $read = _read_once(@args{qw(texts path package source closures)});
    my ($code, $ends, $data_in, $declared, $format) = compile_read($read);
    return {
        (defined $data_in ? (data_in  => $data_in)  : ()),
        ($declared        ? (packages => $declared) : ()),
        ($format          ? (format   => $format)   : ()),
        ($args{texts}     ? (read     => $read)     : ()),    # For compile_read, again
        code => $code,
        data => $read->{data},
        ends => $ends,
        %{$read->{uses}},
        package => $read->{package},
    };
}

# Compiles a text read before (by compile, or kept by PerlRun, which compiles the same text
# for every request): dies with perl's message, or returns the code reference, its END blocks,
# its DATA glob (undef without __DATA__), the packages it declared that did not exist before
# (undef for none) and the format it gave STDOUT (undef for none)
sub compile_read ($read) {
    our $DATA_IN = undef;
    my @declared = grep { !stash_exists($_) } @{$read->{declares}};
    my ($ends, $inits) = Perennial::Executor::Blocks::counts();
    my $dowarn = $^W;    # What a script's BEGIN or INIT sets is not the worker's after it
    local $^W = $dowarn;

    # A `format STDOUT` of its own compiles where no other script's is, so that none is
    # redefined (perl's warning) or replaced for another script; the first one finds none
    my $other = *STDOUT{FORMAT};
    my $io    = $other && *STDOUT{IO};
    local *STDOUT if $io;    # (`local *STDOUT = $io` would keep the format)
    *STDOUT = $io if $io;    ## no critic (RequireLocalizedPunctuationVars) local just above
    my $sub    = Perennial::Executor::Compiler::Fresh::compile_text($read->{text});
    my $err    = $@;
    my $format = *STDOUT{FORMAT};
    undef $format if $other && $format && $format == $other;
    my ($ends_now, $inits_now) = Perennial::Executor::Blocks::counts();
    my ($new_ends, $new_inits)
        = $ends_now != $ends || $inits_now != $inits
        ? Perennial::Executor::Blocks::take($ends, $inits, $read->{path})
        : ([], []);
    die $err =~ s/\s+\z//r . "\n" unless ref $sub eq 'CODE';

    for my $init (@$new_inits) {
        eval { $init->(); 1 } or die(($@ =~ s/\s+\z//r) . "\nINIT failed--call queue aborted\n");
    }
    return (
        $sub, $new_ends,
        defined $read->{data} ? _data_glob($DATA_IN // $read->{package}) : undef,
        @declared ? \@declared : undef, $format
    );
}

# The DATA handle's glob in the package that holds __DATA__ (the script's, or the last it
# declared before it): each request opens it on the data again
sub _data_glob ($package) {
    no strict 'refs';    ## no critic (ProhibitNoStrict) the script's own DATA handle
    return \*{"${package}::DATA"};
}

# What a text says, worked out once for each text when the caller keeps them: PerlRun compiles
# the same file on every request, and reading it again (its data, its shebang, its CHECK
# blocks, five patterns for %ENV) cost 45k instructions a request for hello.pl, more for a
# longer script. At most $MAX_TEXTS are kept (made-up URLs cannot make it grow without end).
my $MAX_TEXTS = 1000;

sub _read_once ($texts, $path, $package, $source, $closures) {
    return _read($path, $package, $source, $closures) unless $texts;
    my $known = $texts->{$path};
    return $known
        if $known
        && $known->{package} eq $package
        && $known->{closures} == ($closures ? 1 : 0)
        && $known->{source} eq $source;
    %$texts = () if keys %$texts >= $MAX_TEXTS;
    return $texts->{$path} = _read($path, $package, $source, $closures);
}

# The text perl compiles (the script wrapped in its package and sub), its data, the packages it
# declares, and what it uses that the executor must know of
sub _read ($path, $package, $source, $closures) {
    my ($code, $data) = split_data($source);
    my $warnings
        = $code =~ /\A#![^\n]*\s-\w*w/ ? 'use warnings;'
        : $closures                    ? "use warnings 'closure';"
        :                                '';
    my $taint = $code =~ /\A#![^\n]*\s-\w*T/ ? 1 : 0;
    my %uses  = (
        taint      => $taint,
        signals    => index($code, 'SIG') >= 0 || index($code, 'alarm') >= 0 ? 1 : 0,
        locale     => $code =~ /\bsetlocale\b/                               ? 1 : 0,
        request    => _reaches_request($code),
        writes_env => _writes_env($code),
        chdirs     => index($code, 'chdir') >= 0 ? 1 : 0,
    );
    $code =~ s/^([ \t]*)CHECK(\s*\{)/${1}UNITCHECK$2/mg;
    (my $file = $path) =~ s/"/\\"/g;

    # A named sub, as mod_perl makes: file-level my variables used by the script's own subs
    # then give perl's "will not stay shared" warning, the classic sign of the closure trap.
    # It is called with what ModPerl::Registry passes (`my $r = shift;`), and with $0 put in
    # place by its caller (Perennial::Executor's _run_script: in the text, each compile of it cost
    # PerlRun 22k to 28k instructions a request). DATA belongs to the package in force where
    # __DATA__ or __END__ stands (`package blosxom;` at the top of the script): asked of perl
    # at the end of the code.
    my $text
        = "package $package; $warnings sub __perennial_script {\n#line 1 \"$file\"\n$code\n;"
        . (defined $data ? 'BEGIN { $' . __PACKAGE__ . '::DATA_IN = __PACKAGE__ }' : '')
        . "}\\&__perennial_script;";
    return {
        source   => $source,
        path     => $path,
        package  => $package,
        closures => $closures ? 1 : 0,
        text     => $text,
        data     => $data,
        declares => [index($code, 'package') >= 0 ? _declared($code) : ()],
        uses     => \%uses,
    };
}

# The packages the script's own text declares (`package blosxom;`), once each; those that do not
# exist before it compiles are its own, as its generated package is (a module's package exists
# already, and main always does)
sub _declared ($code) {
    my %seen;
    return
        grep { !$seen{$_}++ } $code =~ /^[ \t]*package[ \t]+([A-Za-z_]\w*(?:::\w+)*)[ \t]*[;{]/mg;
}

# Whether a package exists, looked up part by part from main::, so that asking creates nothing
sub stash_exists ($name) {
    my $stash = \%main::;
    for my $part (split /::/, $name) {
        my $glob = $stash->{"${part}::"} or return 0;
        $stash = *{$glob}{HASH} or return 0;
    }
    return 1;
}

# A package's symbols freed and its symbol table gone, as Symbol::delete_package does (its
# parent's table is looked up by name, and made if it was missing, as Symbol does), with each
# glob freed where it lies: Symbol looks each of its names up again from main::, and tests the
# name with two patterns, 10k instructions of a PerlRun request. (Walking the tables from
# main:: in Perl, to make nothing, cost 28k more than one lookup by name, made in C.)
sub delete_package ($name) {
    my ($stem, $leaf) = $name =~ /\A(?:(.*)::)?([^:]+)(?:::)?\z/ or return;    # Foo:: is Foo
    my $parent = \%main::;
    if (defined $stem) {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the parent's table, by name
        $parent = \%{"${stem}::"};
    }
    my $glob   = $parent->{"${leaf}::"} or return;
    my $symtab = *{$glob}{HASH}         or return;

    # Through references, which keep each glob alive: freeing one can run a DESTROY that
    # deletes another entry of this table, which an alias would then point at freed
    for my $entry (\(values %$symtab)) {
        undef *$$entry if ref $entry eq 'GLOB';    # A sub's stub or a constant is a plain value
    }
    %$symtab = ();
    delete $parent->{"${leaf}::"};
    return;
}

# The package of a script that compiles into it again (PerlRun, after each request): every
# glob undefined, then every entry out of the table, which stays for the next compile
# (ModPerl::PerlRun's flush_namespace keeps it too; deleting it and making it again cost 16k
# instructions a request). The globs go too, not only their contents: a glob keeps its flags
# (what `use vars` or an import declared stays declared to strict) and the table would keep
# every name a request made (symbolic references, `can`), and a DESTROY run as the globs are
# emptied may fill one again.
sub empty_package ($name) {
    my $symtab = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the package's table, by name
        \%{"${name}::"};
    };
    for my $entry (\(values %$symtab)) {
        undef *$$entry if ref $entry eq 'GLOB';
    }
    %$symtab = ();
    return;
}

# Deterministic, unique and safe: each path part escaped as ModPerl::RegistryCooker does
sub package_for ($class, $root, $path) {
    return join '::', $root, map { _part($_) } grep {length} split m{/}, $path;
}

# One segment of a package name from any string: "cgi-bin" -> "cgi_2dbin", "/x" -> "_2fx"
sub package_part ($class, $text) { _part($text) }

sub _part ($text) { $text =~ s/([^A-Za-z0-9_])/sprintf '_%2x', ord $1/ger =~ s/\A(\d)/_$1/r }

# Code and data: everything from a line holding only __END__ or __DATA__ is data
sub split_data ($source) {
    return ($source, undef) unless $source =~ /^__(?:END|DATA)__[ \t]*\r?$/m;
    my ($code, $data) = split /^__(?:END|DATA)__[ \t]*\r?\n?/m, $source, 2;
    return ($code, $data // '');
}

# Can the script be handed mod_perl's request object: does it read its arguments (shift, @_,
# $_[0], a call with &name; or goto that passes them on)? If not, none is made for it; one that
# asks for it (->request, here or in a library) gets it then. Plain substring searches: one
# alternation over the whole source cost PerlRun 18 us a compile.
sub _reaches_request ($code) {
    for my $word ('shift', '@_', '$_[', 'goto') {
        return 1 if index($code, $word) >= 0;
    }
    return $code =~ /&[\w:]+\s*;/ ? 1 : 0;
}

# Does the script change %ENV itself? Then the executor restores all of it after each request.
# One pattern each: as one alternation the engine tried every branch at every byte (870
# instructions a byte, 228k for hello.pl, on every PerlRun request); each alone starts from
# its literal.
sub _writes_env ($code) {
    return
           $code =~ /%ENV\s*=[^=~]/
        || $code =~ /\$ENV\{[^}]*\}\s*[.|\/&+*-]*=[^=~]/
        || $code =~ /delete\s+\$ENV/
        || $code =~ /local\s+%ENV/
        || $code =~ /\bputenv\b/ ? 1 : 0;
}

1;

__END__

=head1 NAME

Perennial::Executor::Compiler - compile a CGI script into a code reference

=head1 SYNOPSIS

    my $package  = Perennial::Executor::Compiler->package_for('Perennial::ROOT', '/srv/cgi-bin/hello.pl');
    my $compiled = Perennial::Executor::Compiler->compile(path => $path, package => $package,
        source => $text);
    local *0 = \(my $zero = $path);
    $compiled->{code}->($r);
    $_->() for @{$compiled->{ends}};

=head1 DESCRIPTION

Wraps the script's source in C<package P; sub { ... }> with a C<#line 1 "path"> directive, so
warnings and errors name the script and its real line numbers. C<#!perl -w> turns warnings on.
What follows C<__END__> or C<__DATA__> is returned as C<data> (the executor gives it to the
script as C<DATA> on every request, which ModPerl::Registry does not). END blocks declared by
the script are removed from perl's global list and returned in C<ends>.

=head1 METHODS

=head2 compile

    my $compiled = Perennial::Executor::Compiler->compile(path => $p, package => $pkg, source => $s);

Returns C<{code, data, ends, package, taint, signals, locale, request, writes_env}>; dies with
perl's message on a compile error. With C<< texts => \%texts >> (the caller's, kept from one
compile to the next: PerlRun) each text is read once, and C<read> is what was read of it. C<signals> and C<writes_env> say whether the source
mentions signal handlers or assigns to C<%ENV>, so the executor knows how much it must put
back after a request; C<request>, whether it reads its arguments, where mod_perl's request
object comes (one that does not gets it only if it asks, with C<< ->request >>).

=head2 compile_read

    my ($code, $ends, $data_in, $declared, $format)
        = Perennial::Executor::Compiler::compile_read($compiled->{read});

Compiles again a text that C<compile> read (PerlRun, for each request after the first): the
code reference, its END blocks, its DATA glob, the packages it declared that did not exist
before and the format it gave STDOUT (each undef when there is none). Dies as C<compile> does.

=head2 package_part

    Perennial::Executor::Compiler->package_part('/registry');    # _2fregistry

=head2 package_for

    Perennial::Executor::Compiler->package_for('Perennial::ROOT::Registry', '/srv/cgi-bin/my-app.pl');
    # Perennial::ROOT::Registry::srv::cgi_2dbin::my_2dapp_2epl

=head2 split_data

    my ($code, $data) = Perennial::Executor::Compiler->can('split_data')->($source);

=head2 delete_package

    Perennial::Executor::Compiler::delete_package('Perennial::ROOT::PerlRun::x');

What Symbol's C<delete_package> does: every glob of the package undefined, its symbol table
emptied and taken out of its parent's. A package that does not exist is left alone; a name may
end in the table's C<::>, as Symbol takes it.

=head2 empty_package

    Perennial::Executor::Compiler::empty_package('Perennial::ROOT::PerlRun::x');

Every glob of the package undefined (its subs, variables, handles and formats gone), then
every entry deleted; the symbol table stays, empty, for a script that compiles into the
package again.

=head2 stash_exists

    Perennial::Executor::Compiler::stash_exists('Perennial::ROOT::Registry::x');    # 0 or 1

Whether a package has a symbol table, asked without creating one.

=cut
