package Perennial::Script;
use v5.36;

# A compiled CGI script: what the compiler made of its text and what running it needs, put
# together once by the executor that compiled it. Its fields are read as a plain hash on the
# request path (no accessor calls there); the few that change after the compile change only
# through the methods below, each with one owner: the files it required and the libraries it
# depends on (Perennial::Executor::Inc), when those were last looked at and whether its first
# request has been looked at (Perennial::Executor).

# Fields: code, package, data, data_in (the DATA glob of the package __DATA__ is in), ends,
# packages, format (its own `format STDOUT`), taint, signals, locale, request, writes_env, chdirs
# (the compiler's); cgi_pragmas, stdout_layers, stderr_layers, mtime, size, inc, findbin, warn,
# stderr, stderr_handle, checked, goes_home, and compiled_at, compile_ms, lint_handles (a kept
# script's) or text_at, ctime, ino (PerlRun's) (the executor's)
# (the compiler's hash becomes the object: nothing is copied on PerlRun's compile per request)
sub new ($class, $compiled, $more) {
    @$compiled{keys %$more} = values %$more;
    return bless $compiled, $class;
}

# An empty one, for what a compile that failed loaded
sub failed ($class) { bless {}, $class }

# PerlRun: the same text compiled again for the next request (Perennial::Executor::Scripts);
# @compiled as Perennial::Executor::Compiler's compile_read returns it; $pragmas, what the
# compile set of CGI.pm's; $read_at, the time just before its text was read again (undef: not
# read, the file unchanged)
sub compiled_again ($self, $hit, $inc, $pragmas, $read_at, @compiled) {
    @$self{qw(code ends data_in packages format)} = @compiled;
    @$self{qw(cgi_pragmas mtime ctime ino size checked inc findbin)}
        = ($pragmas, @$hit{qw(mtime ctime ino size)}, $hit->{stamp}, $inc, $hit->{findbin});
    $self->{text_at} = $read_at if defined $read_at;
    return $self;
}

# A file it required that is not a module: its %INC key and value
sub own_file ($self, $key, $value) {
    $self->{own}{$key} = $value;
    return;
}

# Its code, END blocks and format, let go of before its package is emptied (PerlRun, after each
# request): a sub that outlives its glob is renamed __ANON__ by perl, which looks a package and
# a glob up by name, 5k instructions a request. The script does not run again.
sub let_go ($self) {
    delete @$self{qw(code ends format)};
    return;
}

# PerlRun: the files it required are forgotten, so they load again next time
sub forget_own ($self) {
    delete $self->{own};
    return;
}

# A library it depends on from outside perl's own directories: its %INC key, path, stamp
# when it compiled (Perennial::Executor::Libraries) and name as perl loaded it
sub depends_on ($self, $key, $path, $stamp, $raw = $path) {
    $self->{deps}{$key} = [$path, $stamp, $raw];
    return;
}

# Its libraries were looked at for this stamp of the file; false when they were already
sub looked_at ($self, $stamp) {
    return 0 if $self->{checked} == $stamp;
    $self->{checked} = $stamp;
    return 1;
}

# Nothing to do when one goes (said, so that perl need not look for it: PerlRun drops one per
# request, just after deleting a package, which empties perl's method caches)
sub DESTROY { }

# After its first request, once the handles it left open have been looked at
sub first_request_done ($self) {
    delete $self->{lint_handles};
    return;
}

1;

__END__

=head1 NAME

Perennial::Script - a compiled CGI script

=head1 SYNOPSIS

    my $script = Perennial::Script->new(Perennial::Executor::Compiler->compile(...),
        {mtime => $hit->{mtime}, inc => [@INC], ...});
    $script->{code}->($r);    # With $0 set to $file (local *0), as the executor calls it
    $script->own_file('lib.pl', $INC{'lib.pl'});    # Perennial::Executor::Inc
    $script->forget_own;                             # PerlRun, after the request

=head1 DESCRIPTION

The compiled form of one script under one executor: the code reference and package the
compiler made (L<Perennial::Executor::Compiler>), its DATA text and the package that reads
it, its END blocks, the packages its text declares, what its source shows it uses (signals,
locale, the request object, %ENV), and what the executor recorded when it compiled it (its
C<@INC>, FindBin values, layers, CGI.pm pragmas, warning handler, STDERR collector, the
file's mtime, when and how fast it compiled). The request path reads these as hash fields.

What changes later changes through methods: L<Perennial::Executor::Inc> keeps the files the
script required (C<own>) and the libraries it depends on (C<deps>); the executor records when
those libraries were last looked at and looks once at the handles the first request left open.

=head1 METHODS

=head2 new, failed

    my $script = Perennial::Script->new($compiled, {mtime => ..., inc => ...});
    my $none   = Perennial::Script->failed;    # What a failed compile loaded goes with it

=head2 compiled_again

    $script->compiled_again($hit, $inc, $pragmas, $read_at,
        Perennial::Executor::Compiler::compile_read($script->{read}));

PerlRun: its text compiled again for the next request; the code, END blocks, DATA glob,
declared packages, format, CGI.pm pragmas, file times, C<@INC> and FindBin's values are this
compile's, and C<$read_at> (unless undef) is the time just before its text was read again.

=head2 own_file, forget_own

    $script->own_file('lib.pl', $INC{'lib.pl'});    # A file it required that is not a module
    $script->forget_own;                             # PerlRun: required again next time

=head2 let_go

    $script->let_go;    # PerlRun, before its package is emptied: it does not run again

=head2 depends_on

    $script->depends_on('Lib.pm', $path, $stamp);    # Compiled again when Lib.pm changes

=head2 looked_at

    next unless $script->looked_at($hit->{stamp});    # already looked at for this stamp

=head2 first_request_done

    $script->first_request_done;    # Its open handles were looked at once: not again

=cut
