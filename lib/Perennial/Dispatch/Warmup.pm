package Perennial::Dispatch::Warmup;
use v5.36;
use Perennial::Dispatch::Files;

# What each worker would otherwise make for itself at its first script request, made once in
# the manager before the workers fork, so that they all share it: the executors of the script
# directories, with the process-wide hooks an executor installs (Children's :via handle,
# AcceptLoop's FCGI): about 0.8 MB of each worker's own memory (bench/memory.pl). An executor
# is found the way a request reaches it, from the URL of a file at the top of each Alias,
# ScriptAlias and DocumentRoot directory (Perennial::Dispatch's executor_for: the sections
# merged, the file not looked for, no plan kept). Nothing is compiled (PerlPreloadScripts does).

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

Perennial::Dispatch::Warmup - make the script directories' executors before the workers fork

=head1 SYNOPSIS

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);    # ([url, executor], ...)

=head1 DESCRIPTION

A worker that makes an executor at its first script request copies the pages it touches and
keeps them: each worker pays for its own. The manager makes them instead, those that the files
at the top of each Alias, ScriptAlias or DocumentRoot directory lead to, before the workers
fork, and the workers share them. No script is compiled or run, and no file is looked at on a
request's behalf: each request still finds its own.

=head1 METHODS

=head2 warm

    my @made = Perennial::Dispatch::Warmup->warm($dispatch);

Tries the URL of the plain files at the top of each directory the dispatcher translates to
(of its first 256 names, at most 16 files that can be scripts: those ending in C<.pl> or
C<.cgi>, or executable, as C<PerlPreloadScripts> takes them) and makes the executor it reaches, if it is a script's or a handler module's. Returns each executor once, with the URL path of the directory that reached it first.

=head1 SEE ALSO

L<Perennial::Dispatch>, L<Perennial::App>, C<PerlPreloadScripts> in L<Perennial::Config>.

=cut
