package Perennial::Doctor;
use v5.36;
use Cwd        ();
use File::Spec ();
use JSON::PP   ();
use POSIX      ();
use Perennial::Executor::Compiler;
use Perennial::Executor::Inc;
use Perennial::Doctor::Findings;
use Perennial::Doctor::Static;

# perennial doctor: which CGI scripts are safe to run resident, and in which mode. Each script
# is compiled as Registry compiles it, in a process of its own (its BEGIN blocks and the
# modules it loads stay there), and its optree is examined (Perennial::Doctor::Static).

our $SECONDS = 30;    # How long one script's examination may take

# The scripts under the paths given: files as named, and the .pl and .cgi files of directories
sub scripts (@paths) {
    my @found;
    for my $path (@paths) {
        if (-d $path) {
            opendir(my $dh, $path) or die "Can't read directory \"$path\": $!\n";
            push @found,
                map {"$path/$_"} sort grep { /\.(?:pl|cgi)\z/ && -f "$path/$_" } readdir $dh;
        }
        elsif (-f $path) { push @found, $path }
        else             { die "No such script or directory: \"$path\"\n" }
    }
    return map { File::Spec->rel2abs($_) } @found;
}

# One script: {script, findings => [each explained (Perennial::Doctor::Findings), in line
# order], libraries => [the files it requires that were examined with it]}
sub examine ($path) {
    pipe(my $in, my $out) or die "Can't make a pipe: $!\n";
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        close $in;
        alarm $SECONDS;    # A BEGIN block that waits for ever does not hold up the report
        my $seen = eval { _static($path) }
            // {found => [{kind => 'compile', line => 0, name => _first_line($@)}]};
        print {$out} JSON::PP->new->canonical->encode($seen);
        close $out;
        POSIX::_exit(0);
    }
    close $out;
    my $json = do { local $/; <$in> };
    waitpid $pid, 0;
    my $seen
        = length $json
        ? JSON::PP->new->decode($json)
        : {found => [{kind => 'compile', line => 0, name => _ended($?)}]};
    return {
        script   => $path,
        findings => [
            map { Perennial::Doctor::Findings::explain({%$_, evidence => 'static'}) }
                @{$seen->{found}}
        ],
        libraries => $seen->{libraries} // [],
    };
}

sub _ended ($status) {
    return ($status & 127) == POSIX::SIGALRM()
        ? "its examination took longer than $SECONDS seconds, and was stopped"
        : "its examination ended with status $status";
}

# The script compiled, and each library it requires by a constant name compiled (not run) in
# its package, as the script would load it
sub _static ($path) {
    my @warnings;
    local $SIG{__WARN__} = sub ($msg) { push @warnings, $msg };
    my ($dir) = $path =~ m{\A(.*)/};
    chdir $dir if defined $dir;
    my ($found, $requires)
        = Perennial::Doctor::Static::findings(_compile($path), \@warnings, $path);
    my (@libraries, %done);
    my @todo = map { [$_, $path] } @$requires;
    while (my $next = shift @todo) {
        my $file = _library(@$next) // next;
        next if $done{$file}++;
        push @libraries, $file;
        my ($more, $names)
            = eval { Perennial::Doctor::Static::findings(_compile($file), [], $file, 1); } or do {
            push @$found, {kind => 'compile', line => 0, name => "$file: " . _first_line($@)};
            next;
            };
        push @$found, map { +{%$_, file => $file} } @$more;
        push @todo,   map { [$_, $file] } @$names;
    }
    return {found => $found, libraries => \@libraries};
}

sub _compile ($path) {
    open(my $fh, '<:raw', $path) or die "Can't read $path: $!\n";
    my $source = do { local $/; <$fh> };
    return Perennial::Executor::Compiler->compile(
        path     => $path,
        package  => 'Perennial::Doctor::Examined',
        source   => $source,
        closures => 1
    );
}

# Where a required name leads from the file that requires it: a path as written (relative to
# the script's directory, where it runs), else the first in @INC; nothing for perl's own
# libraries and what is loaded already (the modules the script uses)
sub _library ($name, $from) {
    return if $INC{$name};
    my @dirs = $name =~ m{\A\.{0,2}/} ? ('.') : ('.', grep { !ref } @INC);
    my ($file) = grep {-f} $name =~ m{\A/} ? ($name) : map {"$_/$name"} @dirs;
    return unless defined $file;
    $file = File::Spec->canonpath(File::Spec->rel2abs($file));
    return if Perennial::Executor::Inc::perls_own($file);
    return $file;
}

# Every script examined ({script, served => [{mode, url, where}]}: how it is served, from
# Perennial::Doctor::Sites, or the one mode asked for); a file that another of them requires is
# reported as that one's library (what it does is found in the script that loads it), not as a
# script of its own
sub report (@scripts) {
    my @results = map { +{%{examine($_->{script})}, served => $_->{served}} } @scripts;
    my %loaded_by;
    for my $r (@results) { push @{$loaded_by{$_}}, $r->{script} for @{$r->{libraries}} }
    for my $r (grep { $loaded_by{$_->{script}} } @results) {
        @$r{qw(findings library_of)} = ([], $loaded_by{$r->{script}});
    }
    return @results;
}

sub _first_line ($error) { (split /\n/, $error)[0] // 'unknown error' }

# The findings that make a script ({script, findings}) unsafe in $mode
sub unsafe ($result, $mode) {
    return if $result->{library_of};
    return grep { Perennial::Doctor::Findings::unsafe_in($mode, $_) } @{$result->{findings}};
}

# Per mode the script is served in: {mode, urls, where, unsafe => number of findings}
sub verdicts ($result) {
    my (%by, @modes);
    for my $how (@{$result->{served}}) {
        my $v = $by{$how->{mode}} //= do {
            push @modes, $how->{mode};
            {   mode   => $how->{mode},
                urls   => [],
                where  => [],
                unsafe => scalar unsafe($result, $how->{mode})
            };
        };
        push @{$v->{urls}}, $how->{url} if defined $how->{url};
        push @{$v->{where}}, $how->{where}
            if defined $how->{where} && !grep { $_ eq $how->{where} } @{$v->{where}};
    }
    return map { $by{$_} } @modes;
}

# Whether a script is unsafe in any mode it is served in
sub any_unsafe ($result) {
    scalar grep { $_->{unsafe} } verdicts($result);
}

# The report for a terminal: per script, its verdict in each mode it is served in, then each
# finding with its line, what it does and the fix
sub table ($results) {
    my $out = '';
    for my $r (@$results) {
        $out .= _heading($r);
        for my $f (@{$r->{findings}}) {
            my $where = $f->{file} ? ($f->{file} =~ m{([^/]+)\z})[0] . ' ' : '';
            $out .= sprintf "  %sline %-4d %-8s %s [%s]\n           fix: %s\n", $where,
                $f->{line}, $f->{level}, $f->{does}, _evidence($f), $f->{fix};
        }
    }
    return $out;
}

# A script's first line: what it is to each mode it is served in
sub _heading ($r) {
    my $name = _shown($r->{script});
    return
        "$name: a library, examined with "
        . join(', ', map { _shown($_) } @{$r->{library_of}}) . "\n"
        if $r->{library_of};
    my @verdicts = verdicts($r);
    return "$name: " . _verdict($verdicts[0]) . "\n" if @verdicts == 1 && !@{$verdicts[0]{urls}};
    return join '', "$name:\n", map { '  ' . _verdict($_) . "\n" } @verdicts;
}

my %MODE_NAME = (registry => 'Registry', perlrun => 'PerlRun', cgi => 'CGI');

sub _verdict ($v) {
    my $name = $MODE_NAME{$v->{mode}};
    my $said = $v->{unsafe} ? "unsafe under $name ($v->{unsafe})" : "safe under $name";
    $said .= ': ' . join(', ', @{$v->{urls}})                           if @{$v->{urls}};
    $said .= ' (' . join(', ', map { _shown($_) } @{$v->{where}}) . ')' if @{$v->{where}};
    return $said;
}

# A path below the working directory as a relative one, for a shorter table
sub _shown ($path) {
    my $here = Cwd::getcwd() // return $path;
    return index($path, "$here/") == 0 ? substr($path, length($here) + 1) : $path;
}

sub _evidence ($f) { ref $f->{evidence} ? join(', ', @{$f->{evidence}}) : $f->{evidence} }

sub json ($results) {
    my @scripts = map {
        my @verdicts = verdicts($_);
        +{  script => $_->{script},
            safe   => any_unsafe($_) ? JSON::PP::false : JSON::PP::true,
            modes  =>
                [map { +{%$_, safe => $_->{unsafe} ? JSON::PP::false : JSON::PP::true} } @verdicts],
            findings  => $_->{findings},
            libraries => $_->{libraries},
            ($_->{library_of} ? (library_of => $_->{library_of}) : ()),
        }
    } @$results;
    return JSON::PP->new->canonical->pretty->encode({scripts => \@scripts});
}

1;

__END__

=head1 NAME

Perennial::Doctor - which CGI scripts are safe to run resident, and in which mode

=head1 SYNOPSIS

    my @results = Perennial::Doctor::report(
        map { {script => $_, served => [{mode => 'registry'}]} } Perennial::Doctor::scripts(@ARGV));
    print Perennial::Doctor::table(\@results);

=head1 DESCRIPTION

The examination behind C<perennial doctor> (see L<Perennial::Manual::Scripts>): each script is
compiled as Registry compiles it, in a process of its own, and what its optree shows is
reported with the line, what it does under Registry and the fix.

=cut
