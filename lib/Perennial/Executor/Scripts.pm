package Perennial::Executor::Scripts;
use v5.36;
use Cwd                  ();
use Fcntl                qw(O_RDONLY);
use Symbol               ();
use Time::HiRes          ();
use Perennial::ErrorText qw(error_text);
use Perennial::Executor::Catalog;
use Perennial::Executor::CGICarp;
use Perennial::Executor::CGIWraps;
use Perennial::Executor::CGIPragmas;
use Perennial::Executor::Compiler;
use Perennial::Executor::Errors;
use Perennial::Executor::FileTimes qw(local_times unchanged);
use Perennial::Executor::Inc;
use Perennial::Executor::Layers;
use Perennial::Executor::Libraries;
use Perennial::Executor::Lint;
use Perennial::Script;

# The scripts of one executor, compiled: each compiled where it will run, into its own package,
# with its own @INC, FindBin, layers and pragmas; kept when the policy caches them (Registry),
# compiled again when the file or a library it loaded changed.

sub new ($class, %args) {
    return bless {
        %args{qw(policy log root_ns home)},
        keeps => $args{policy}{cache} eq 'mtime',                # Registry: compiled once, kept
        cache => {},
        files => {},                                             # What is kept of each file (_kept)
        texts => $args{policy}{cache} eq 'mtime' ? undef : {},   # What each text says
    }, $class;
}

# The scripts compiled and kept (Registry), for the Perl status view
sub compiled ($self, $handler) {
    my $cache = $self->{cache};
    return map {
        +{  file       => $_,
            package    => $cache->{$_}{package},
            handler    => $handler,
            compiled   => $cache->{$_}{compiled_at},
            compile_ms => $cache->{$_}{compile_ms},
            mtime      => int $cache->{$_}{mtime},
            depends_on => join(' ', sort keys %{$cache->{$_}{deps} // {}}),
        }
    } sort keys %$cache;
}

sub prepare ($self, $hit) {

    # A kept script (only those are in the cache) is good while its file, and the libraries it
    # depends on, are as it compiled (asked here, not in a method: its call was 3k a request)
    my $cached = $self->{cache}{$hit->{file}};
    return ($cached, undef)
        if $cached
        && $cached->{mtime} == $hit->{mtime}
        && $cached->{size} == $hit->{size}
        && !($cached->{deps} && $self->_libraries_changed($cached, $hit));
    return $self->_prepare_anew($hit);
}

# A script not compiled yet, changed, or one PerlRun runs: compiled now
sub _prepare_anew ($self, $hit) {

    # A changed script starts from an empty package: no stale subs, no "redefined" warnings;
    # so does one that the generation before a graceful restart compiled in this process (the
    # manager). Only executors that keep scripts have one to empty: PerlRun's packages go
    # after each request. It compiles where it will run, so a BEGIN-time require of a relative
    # path finds its file. (Its name is made once: PerlRun compiles on every request, and
    # making it cost 40k.)
    my $package = $self->{package_of}{$hit->{file}}
        //= Perennial::Executor::Compiler->package_for($self->{root_ns}, $hit->{file});
    Perennial::Executor::Compiler::delete_package($package) if $self->{keeps};
    my $chdir = $self->{policy}{chdir};
    chdir $hit->{dir} or return (undef, "Can't chdir to the script's directory: $!") if $chdir;
    Perennial::Executor::Inc::enter();
    my $keeps = $self->{keeps};
    Perennial::Executor::Libraries::compiling($hit->{file}) if $keeps;
    my ($compiled, $err) = $self->_compile($hit, $package, Time::HiRes::time());

    # What a failed compile loaded that is not a module goes with it (into a script discarded);
    # a kept one depends on the libraries it requires
    my $dir = $chdir ? $hit->{dir} : $self->{home};
    my @new = Perennial::Executor::Inc::leave($compiled // Perennial::Script->failed, $dir);
    Perennial::Executor::Libraries::record($compiled, $dir, $hit->{file}, @new)
        if $compiled && $keeps;
    chdir $self->{home} if $chdir;
    return (undef,     $err)  unless $compiled;
    return ($compiled, undef) unless $keeps;
    $self->{cache}{$hit->{file}} = $compiled;
    Perennial::Executor::Catalog::changed();
    return ($compiled, undef);
}

sub _compile ($self, $hit, $package, $began) {
    my $file = $hit->{file};

    # A script's `use lib` belongs to that script: kept with it, not left for the others. Its
    # BEGIN blocks see $0 as its path, and so does FindBin if the script is the first to load it
    # ($0 as a plain scalar, as the script runs with it: perl's own renames the process); FindBin
    # loaded already describes the script for the compile (not loaded, it has nothing to say:
    # making its four variables and deleting them again cost 19k instructions a PerlRun request)
    local @INC = @INC;
    local *0   = \"$file";
    my $findbin = $hit->{findbin} //= findbin_values($file);    # realpath: once per URL
    local @FindBin::{qw(Bin Script RealBin RealScript)}         ## no critic (ProhibitPackageVars)
        if $INC{'FindBin.pm'};
    set_findbin($findbin) if $INC{'FindBin.pm'};

    # A library loaded again after it changed redefines its subs: that is the point, not news
    my $kept   = $self->_kept($file);
    my $reload = delete $self->{reloading} ? 1 : 0;
    my ($warn, $on_warning)
        = @{$kept->{warnings}[$reload] //= _warnings_of($self->{log}, $file, $reload)};
    local $SIG{__WARN__} = $on_warning;

    # PerlRun: the text of the last request compiles again into that request's script object
    # (the package is the file's, the same for each compile here), read again unless the
    # file's look this request says it is unchanged (Perennial::Executor::FileTimes)
    my $last = delete $kept->{last};
    return $self->_again($last, $hit, $kept)
        if $last && ($kept->{local_times} //= local_times($file)) && unchanged($last, $hit);
    my $source = _slurp($file) // return (undef, "Can't read script: $!");
    return $self->_again($last, $hit, $kept, $began)
        if $last && $last->{read}{source} eq $source;
    return $self->_afresh($hit, $package, $source, $kept, $findbin, $warn, $began);
}

# A script compiled into a new script object: the first time, after an edit, and always for
# an executor that keeps it compiled
sub _afresh ($self, $hit, $package, $source, $kept, $findbin, $warn, $began) {
    my $file    = $hit->{file};
    my @compile = (
        \&Perennial::Executor::Compiler::compile, 'Perennial::Executor::Compiler',
        path     => $file,
        package  => $package,
        source   => $source,
        closures => $self->{keeps},
        texts    => $self->{texts}    # PerlRun: the same text, read once
    );
    my $layers = _layers_for($source, $warn);
    my ($compiled, $pragmas) = eval {
        $layers
            ? _with_layers($layers, @compile)
            : Perennial::Executor::CGIPragmas->around_compile(@compile);
    };
    return (undef, error_text($@)) unless $compiled;
    Perennial::Executor::CGIWraps::install($package);    # Its copies of CGI.pm's wrapped subs
    Perennial::Executor::CGICarp::install();             # And CGI::Carp's, if it is loaded
    $self->{log}->warn("$file: -T is ignored: taint mode belongs to the whole interpreter")
        if $compiled->{taint};
    delete $compiled->{read} if $layers;                 # Compiled again only where nothing is tied

    # What staying resident will do to it, said once: at compile, and after its first request
    my $resident = $self->{keeps};
    $warn->($_) for $resident ? Perennial::Executor::Lint::compile_notes($source) : ();
    my ($errors, $errors_fh)
        = @{$kept->{errors}
            //= [Perennial::Executor::Errors->new($self->{log}, $file), Symbol::gensym()]};
    return Perennial::Script->new(
        $compiled,
        {   cgi_pragmas => $pragmas,
            (   map  { ("${_}_layers" => $layers->{$_}) }
                grep { $layers->{$_}->any } keys %{$layers || {}}
            ),
            file    => $file,
            mtime   => $hit->{mtime},
            size    => $hit->{size},
            checked => $hit->{stamp},      # Its libraries are as loaded now
            inc     => _same_inc($kept),

            # Back to the executor's directory after each request: when it ran in its own, or
            # when it may move (ModPerl::Registry leaves that for the next script)
            goes_home     => $self->{policy}{chdir} || $compiled->{chdirs},
            findbin       => $findbin,
            warn          => $warn,
            stderr        => $errors,
            stderr_handle => $errors_fh,
            $resident    # Kept: for the Perl status page, when and how fast
            ? ( lint_handles => 1,
                compiled_at  => $began,
                compile_ms   => (Time::HiRes::time() - $began) * 1000
                )

                # PerlRun: what says whether its text is still the file's (FileTimes::unchanged)
            : (text_at => $began, ctime => $hit->{ctime}, ino => $hit->{ino})
        }
    );
}

# PerlRun: a script whose text is as its last request's compiles again into the object that
# request ran (what the text says, its handles and handlers stay; made afresh, with the
# compiler's arguments, the object and the checks around them, they cost 90k instructions a
# request). A nested request for the same file (a subrequest) finds none and makes its own.
# What the compile sets of CGI.pm's pragmas is noted again: the same text can set others (a
# BEGIN block that reads the request's %ENV, or a settings file it runs).
sub _again ($self, $script, $hit, $kept, $read_at = undef) {
    Perennial::Executor::CGIPragmas::before_compile();
    my @compiled = eval { Perennial::Executor::Compiler::compile_read($script->{read}) }
        or return (undef, error_text($@));
    return $script->compiled_again($hit, _same_inc($kept),
        scalar Perennial::Executor::CGIPragmas::after_compile(),
        $read_at, @compiled);
}

# PerlRun, after a request: its script is there for the next request's compile
sub ran ($self, $script) {
    $self->_kept($script->{file})->{last} = $script if $script->{read};
    return;
}

# A file's bytes, read without perl's buffered layer (open with :raw and a readline cost PerlRun
# 8k instructions a request more); undef, with $!, if it cannot be read. One handle serves every
# read, opened on each file in turn: a new handle's IO object empties perl's cache of class
# names, and each `Class->method` after it looked its class up again (PerlRun, 19k a request).
sub _slurp ($file) {
    state $fh = Symbol::gensym();
    sysopen($fh, $file, O_RDONLY) or return;
    my ($bytes, $got) = ('');
    1 while $got = sysread($fh, $bytes, 65_536, length $bytes);
    return unless defined $got;    # With $! as the read left it (the next open closes it)
    CORE::close($fh);
    return $bytes;
}

# What is kept of a file from compile to compile, one record per file: its error collector and
# the handle its requests get as STDERR (tied to the collector by the executor at the first
# request), and its warning handlers. PerlRun's script is new on every request, and making
# these again cost 14k and 7k instructions a request. At most $MAX_FILES files.
my $MAX_FILES = 1000;

sub _kept ($self, $file) {
    my $files = $self->{files};
    %$files = () if !$files->{$file} && keys %$files >= $MAX_FILES;
    return $files->{$file} //= {};
}

# @INC as the compile left it: the list kept from the file's last compile when it is the same,
# so that a PerlRun script, compiled on every request, keeps the @INC array that
# Perennial::Executor::Globals made for its list (a new list made it copy @INC each request, 12k)
sub _same_inc ($kept) {
    my $now = join "\0", @INC;    # One op: comparing entry by entry in Perl cost what it saved
    return $kept->{inc} if defined $kept->{inc_text} && $kept->{inc_text} eq $now;
    $kept->{inc_text} = $now;
    return $kept->{inc} = [@INC];
}

# binmode STDOUT/STDERR at BEGIN time (use open qw(:std ...)) is the script's, kept with it: the
# stand-ins that record it, for a script whose text may do it (false: none)
sub _layers_for ($source, $warn) {
    return (index($source, 'binmode') >= 0 || index($source, 'use open') >= 0)
        && {stdout => Perennial::Executor::Layers->new,
        stderr => Perennial::Executor::Layers->new(said => sub ($bytes) { $warn->($bytes) }),
        };
}

# A file's warnings as it compiles go to the log with its name, but, when it is $reload-ed
# (a library it uses changed), a library's subs redefined as it is loaded again: [what warns,
# the warning handler]
sub _warnings_of ($log, $file, $reload) {
    my $warn    = sub ($msg) { $log->warn("$file: $msg") };
    my $handler = sub ($msg) {
        return if $msg =~ /\AToo late to run INIT block/;    # It runs, just after
        $warn->($msg) unless $reload && $msg =~ /\ASubroutine \S+ redefined /;
    };
    return [$warn, $handler];
}

# Compiles with STDOUT and STDERR standing in for the script's, to record the layers it pushes
sub _with_layers ($layers, @compile) {
    local *STDOUT;
    local *STDERR;
    tie *STDOUT, 'Perennial::Executor::Layers', $layers->{stdout};
    tie *STDERR, 'Perennial::Executor::Layers', $layers->{stderr};
    my @got = eval { Perennial::Executor::CGIPragmas->around_compile(@compile) };
    my $err = $@;
    {
        no warnings 'untie';    ## no critic (ProhibitNoWarnings) $layers still holds the objects
        untie *STDOUT;
        untie *STDERR;
    }
    die $err if $err;
    return @got;
}

# Looked at when the script itself is (PerlScriptCheck): a library it depends on from outside
# perl's own directories that changed recompiles it, and the library is loaded again unless
# another script has loaded it again already
sub _libraries_changed ($self, $script, $hit) {
    $script->looked_at($hit->{stamp}) or return 0;
    my ($changed, $reload)
        = Perennial::Executor::Libraries::changed($script, $hit->{seconds} // 0);
    return 0 unless @$changed;
    Perennial::Executor::Inc::forget(@$reload);
    $self->{log}->info("$hit->{file}: compiling again, changed: @$changed"
            . (@$reload ? '' : ' (loaded again already)'));
    $self->{reloading} = 1;
    return 1;
}

# FindBin describes the program, which here is the script, not bin/perennial (mod_perl gets
# this wrong, and scripts doing `use lib "$FindBin::Bin/lib"` break under it)
sub findbin_values ($file) {
    my $real = Cwd::realpath($file) // $file;
    return [_dir_and_name($file), _dir_and_name($real)];
}

# A file's directory and name, as File::Basename's dirname and basename give them for a file's
# path (FindBin's), without running that module in a worker: its first use there copied some
# 20 pages of the manager's memory (bench/pages.pl)
sub _dir_and_name ($path) {
    my ($dir, $name) = $path =~ m{\A(.*)/([^/]*)\z}s or return ('.', $path);
    $dir =~ s{/+\z}{};
    return (length $dir ? $dir : '/', $name);
}

sub set_findbin ($values) {
    no strict 'refs';    ## no critic (ProhibitNoStrict) FindBin's own variables
    (${'FindBin::Bin'}, ${'FindBin::Script'}, ${'FindBin::RealBin'}, ${'FindBin::RealScript'})
        = @$values;
}

1;

__END__

=head1 NAME

Perennial::Executor::Scripts - the compiled scripts of one executor

=head1 SYNOPSIS

    my $scripts = Perennial::Executor::Scripts->new(policy => {cache => 'mtime', chdir => 1},
        log => $log, root_ns => 'Perennial::ROOT::Registry', home => getcwd());
    my ($script, $err) = $scripts->prepare($hit);

=head1 DESCRIPTION

Compiles a script found by L<Perennial::Executor::Resolver> into a L<Perennial::Script>: in
its own package below C<root_ns>, in its directory when the policy says C<chdir>, with the
layers its BEGIN time pushes on STDOUT and STDERR, its C<use lib> paths and its CGI.pm
pragmas. With C<cache =E<gt> 'mtime'> (Registry) the script is kept and compiled again when its
file, or a library it loaded from outside perl's own directories, changes; a changed script,
or one a previous generation compiled in this process, starts from an empty package.

=head1 METHODS

=head2 new

    my $scripts = Perennial::Executor::Scripts->new(policy => $policy, log => $log,
        root_ns => $namespace, home => $dir);

=head2 prepare

    my ($script, $error) = $scripts->prepare($hit);

The script of a resolved URL (C<file>, C<dir>, C<mtime>, C<stamp>), compiled if it is not kept
or changed.

=head2 compiled

    my @kept = $scripts->compiled('ModPerl::Registry');

The scripts kept, for the Perl status view: file, package, handler, when and how fast each
compiled, its mtime.

=head1 FUNCTIONS

=head2 findbin_values, set_findbin

    my $values = Perennial::Executor::Scripts::findbin_values($file);
    Perennial::Executor::Scripts::set_findbin($values);

FindBin's four variables for a script (C<Bin>, C<Script>, C<RealBin>, C<RealScript>), and
setting them: FindBin describes the script, not bin/perennial.

=cut
