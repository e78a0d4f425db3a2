package Perennial::Dispatch::Warmup;
use v5.36;

# What each worker would otherwise make for itself at its first script request, made once in
# the manager before the workers fork, so that they all share it: the executor of each script
# directory, with the process-wide hooks an executor installs (Children's :via handle,
# AcceptLoop's FCGI). Made in each worker, they cost every worker about 300 KB of memory of
# its own (bench/memory.pl). A directory's executor is found the way a request finds it: the
# URL of a file at the top of each Alias, ScriptAlias and DocumentRoot is planned. Nothing is
# compiled (that is PerlPreloadScripts), and the files are looked at again by each request.

my $MAX_NAMES = 64;    # Names read at the top of each directory: a large one is not listed whole

# The executors made (or found made) for the dispatcher's directories, each once, with the URL
# path of the directory that led to it first: ([url path, executor], ...)
sub warm ($class, $dispatch) {
    my (@made, %seen);
    for my $root ($dispatch->roots) {
        next if $root->{file};    # An Alias to one file
        for my $name (_names($root->{dir})) {
            my $executor = $dispatch->executor_for("$root->{url}/$name") or next;
            push @made, [$root->{url} || '/', $executor] unless $seen{$executor}++;
        }
    }
    return @made;
}

# The plain files at the top of a directory (not dot files), at most $MAX_NAMES of its names
sub _names ($dir) {
    opendir(my $dh, $dir) or return;
    my @names;
    while (@names < $MAX_NAMES && defined(my $name = readdir $dh)) {
        push @names, $name if index($name, '.') != 0 && -f "$dir/$name";
    }
    @names = sort @names;
    return @names;
}

1;

__END__

=head1 NAME

Perennial::Dispatch::Warmup - make the script directories' executors before the workers fork

=head1 SYNOPSIS

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);    # ([url, executor], ...)

=head1 DESCRIPTION

A worker that makes an executor at its first script request copies the pages it touches and
keeps them: each worker pays for its own. The manager makes them instead, one for each script
directory that a file at the top of an Alias, ScriptAlias or DocumentRoot leads to, before
the workers fork, and the workers share them. No script is compiled or run.

=head1 METHODS

=head2 warm

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);

Plans the URL of each plain file at the top of each directory the dispatcher translates to
(at most 64 names each) and makes the executor it reaches, if it is a script's or a handler
module's. Returns each executor once, with the URL path of the directory that reached it first.

=head1 SEE ALSO

L<Perennial::Dispatch>, L<Perennial::App>, C<PerlPreloadScripts> in L<Perennial::Config>.

=cut
