package Perennial::Dispatch::Warmup;
use v5.36;
use Cwd ();
use Perennial::Dispatch::Files;

# What each worker would otherwise make for itself at its first script request, made once in
# the manager before the workers fork, so that they all share it: the executors of the script
# directories, with the process-wide hooks an executor installs (Children's :via handle,
# AcceptLoop's FCGI): about 0.8 MB of each worker's own memory (bench/memory.pl). An executor
# is found the way a request reaches it, from the URL of a file at the top of each Alias,
# ScriptAlias and DocumentRoot directory (Perennial::Dispatch's executor_for: the sections
# merged, the file not looked for, no plan kept). Nothing is compiled here but what
# PerlPreloadScripts names, as ModPerl::RegistryLoader compiles it.

my $MAX_NAMES = 256;    # Names read at the top of a directory: a large one is not listed whole
my $MAX_FILES = 16;     # Of those, the files whose URL is tried

# The executors made (or found made) for the dispatcher's directories, each once, with the URL
# path of the directory that led to it first: ([url path, executor], ...)
sub warm ($class, $dispatch) {
    my (@made, %seen);
    for my $root ($dispatch->roots) {
        next if $root->{file};    # An Alias to one file
        for my $name (_files($root->{dir})) {
            my $executor = $dispatch->executor_for("$root->{url}/$name") or next;
            push @made, [$root->{url} || '/', $executor] unless $seen{$executor}++;
        }
    }
    return @made;
}

# PerlPreloadScripts DIR ...: every script below each DIR (a .pl or .cgi file, or an
# executable one; not dot files, nor a library another of them requires by path) compiled now
# by the Registry executor that a request for it would reach, so workers fork with the
# compiled code (ModPerl::RegistryLoader). Dies when a DIR is not there or no Registry
# location serves it; a script that does not compile is a warn line.
sub preload_scripts ($class, $dirs, $log, @dispatches) {
    for my $want (@$dirs) {
        my $real = Cwd::realpath($want)
            // die "PerlPreloadScripts: Can't find directory \"$want\"\n";
        my %count;
        my @files = _not_required(Perennial::Dispatch::Files->scripts_below($real));    # Once
        for my $dispatch (@dispatches) {
            for my $root ($dispatch->roots) {
                my $top = Cwd::realpath($root->{dir}) // next;
                next unless $real eq $top || index($real, "$top/") == 0;
                for my $file (@files) {
                    my $path = substr $file, length $top;
                    my ($executor, $name) = $dispatch->registry_for($root->{url} . $path) or next;
                    my $err = $executor->preload($path);
                    $count{$name}[$err ? 1 : 0]++;
                    $log->warn("PerlPreloadScripts: $file: $err") if $err && $log;
                }
            }
        }
        die "PerlPreloadScripts $want: no Registry location serves this directory\n" unless %count;
        for my $name (sort keys %count) {
            my ($done, $failed) = map { $_ // 0 } @{$count{$name}};
            $log->info("PerlPreloadScripts $want: $done scripts compiled for $name"
                    . ($failed ? ", $failed did not compile" : ''))
                if $log;
        }
    }
    return;
}

# Less the libraries the others load by path (`require "./countlib.pl"`, `do "lib.pl"`,
# `require "$FindBin::Bin/lib.pl"`): they are not scripts, and compiled as one they would only
# say misleading things in the log
sub _not_required (@files) {
    my %required;
    for my $file (@files) {
        open(my $fh, '<', $file) or next;
        my $text = do { local $/; <$fh> };
        my ($dir) = $file =~ m{\A(.*)/};
        for my $name (
            $text =~ m{\b(?:require|do)\s*\(?\s*["'](?:\$FindBin::(?:Real)?Bin/|\./)?
                ([^"'\$\@]+\.pl)["']}gx
            )
        {
            $required{$name =~ m{\A/} ? $name : "$dir/$name"} = 1;
        }
    }
    return grep { !$required{$_} } @files;
}

# The script directories' executors of every dispatcher, made before the workers fork so
# that they share them, and an info line saying for which URLs (a build without a log, in a
# test, makes them as requests come)
sub warm_all ($class, $log, @dispatches) {
    return unless $log;
    my @made = map { $class->warm($_) } @dispatches;
    my %seen;
    my @urls = grep { !$seen{$_}++ } map { $_->[0] } @made;
    $log->info(scalar(@made) . ' executors made before the workers fork, for ' . join ', ', @urls)
        if @made;
    return;
}

# Up to $MAX_FILES files at the top of a directory that can be scripts (as PerlPreloadScripts
# takes them: Perennial::Dispatch::Files::can_be_script), of its first $MAX_NAMES names, not
# dot files
sub _files ($dir) {
    opendir(my $dh, $dir) or return;
    my @names;
    while (@names < $MAX_NAMES && defined(my $name = readdir $dh)) {
        push @names, $name if index($name, '.') != 0;
    }
    my @files = grep { Perennial::Dispatch::Files::can_be_script("$dir/$_") } sort @names;
    splice @files, $MAX_FILES if @files > $MAX_FILES;
    return @files;
}

1;

__END__

=head1 NAME

Perennial::Dispatch::Warmup - make the script directories' executors, and compile PerlPreloadScripts, before the workers fork

=head1 SYNOPSIS

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);    # ([url, executor], ...)
    Perennial::Dispatch::Warmup->preload_scripts(['/srv/cgi-bin'], $log, @dispatches);
    Perennial::Dispatch::Warmup->warm_all($log, @dispatches);

=head1 DESCRIPTION

A worker that makes an executor at its first script request copies the pages it touches and
keeps them: each worker pays for its own. The manager makes them instead, those that the files
at the top of each Alias, ScriptAlias or DocumentRoot directory lead to, before the workers
fork, and the workers share them. No script is compiled or run, and no file is looked at on a
request's behalf: each request still finds its own.

=head1 METHODS

=head2 preload_scripts

    Perennial::Dispatch::Warmup->preload_scripts(\@dirs, $log, @dispatches);

C<PerlPreloadScripts>: compiles every script below each directory (a F<.pl> or F<.cgi> file,
or an executable one; not dot files, nor a library another script loads by path) with the
Registry executor a request for it would reach, as ModPerl::RegistryLoader does. Dies when a
directory is not there or no Registry location serves it; a script that does not compile is
logged and the others go on.

=head2 warm

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);

Tries the URL of the plain files at the top of each directory the dispatcher translates to
(of its first 256 names, at most 16 files that can be scripts: those ending in C<.pl> or
C<.cgi>, or executable, as C<PerlPreloadScripts> takes them) and makes the executor it reaches, if it is a script's or a handler module's. Returns each executor once, with the URL path of the directory that reached it first.

=head2 warm_all

    Perennial::Dispatch::Warmup->warm_all($log, @dispatches);

L</warm> for each dispatcher (the main server's and each virtual host's), with one info line
naming the URLs; nothing without a log.

=head1 SEE ALSO

L<Perennial::Dispatch>, L<Perennial::App>, C<PerlPreloadScripts> in L<Perennial::Config>.

=cut
