package Perennial::Doctor;
use v5.36;
use File::Spec ();
use Perennial::Executor::Compiler;
use Perennial::Executor::Inc;
use Perennial::Config::Handlers;
use Perennial::Doctor::Child;
use Perennial::Doctor::Findings;
use Perennial::Doctor::Dynamic;
use Perennial::Doctor::Log;
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
    my $seen = Perennial::Doctor::Child->run(examination => $SECONDS, sub () { _static($path) });
    my $found
        = $seen->{error}
        ? [{kind => 'compile', line => 0, name => _first_line($seen->{error})}]
        : $seen->{found};
    return {
        script    => $path,
        findings  => [map { +{%$_, evidence => ['static']} } @$found],
        libraries => $seen->{libraries} // [],
        fields    => $seen->{fields}    // [],
        relative  => $seen->{relative}  // [],
        dismissed => $seen->{dismissed} // [],
    };
}

# The script compiled, and each library it requires by a constant name compiled (not run) in
# its package, as the script would load it
sub _static ($path) {
    my @warnings;
    local $SIG{__WARN__} = sub ($msg) { push @warnings, $msg };
    my ($dir) = $path =~ m{\A(.*)/};
    chdir $dir if defined $dir;
    my $seen  = Perennial::Doctor::Static::findings(_compile($path), \@warnings, $path);
    my $found = $seen->{found};
    my (@libraries, %done);
    my @todo = map { [$_, $path] } @{$seen->{requires}};

    while (my $next = shift @todo) {
        my $file = _library(@$next) // next;
        next if $done{$file}++;
        push @libraries, $file;
        my $more = eval { Perennial::Doctor::Static::findings(_compile($file), [], $file, 1) }
            or do {
            push @$found, {kind => 'compile', line => 0, name => "$file: " . _first_line($@)};
            next;
            };
        push @$found, map { +{%$_, file => $file} } @{$more->{found}};
        push @todo,   map { [$_, $file] } @{$more->{requires}};
    }
    return {%$seen, found => $found, libraries => \@libraries};
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
# script of its own. $with: {run => run the scripts too (Perennial::Doctor::Dynamic), log => an
# error log's text to read (Perennial::Doctor::Log)}.
sub report ($with, @scripts) {
    my @results = map { +{%{examine($_->{script})}, served => $_->{served}} } @scripts;
    my %loaded_by;
    for my $r (@results) { push @{$loaded_by{$_}}, $r->{script} for @{$r->{libraries}} }
    for my $r (@results) {
        if ($loaded_by{$r->{script}}) {
            @$r{qw(findings library_of)} = ([], $loaded_by{$r->{script}});
            next;
        }
        _evidence_of_handlers($r);
        _evidence_of_log($r, $with->{log}) if defined $with->{log};
        _evidence_of_run($r)               if $with->{run} && _runs($r);
        $r->{findings} = [
            map  { Perennial::Doctor::Findings::explain($_) }
            sort { $a->{line} <=> $b->{line} || $a->{kind} cmp $b->{kind} } @{$r->{findings}}
        ];
    }
    return @results;
}

# What depends on how the script is served: a require of ./lib.pl where the handler does not run
# scripts in their own directory, a script CGI would run that is not executable
sub _evidence_of_handlers ($r) {
    my @astray = grep {
        my $policy = Perennial::Config::Handlers::handler_policy($_->{handler} // '');
        $policy && !$policy->{chdir}
    } @{$r->{served}};
    my %with = (
        unsafe_in => [map { $_->{mode} } @astray],
        handlers  => [map { $_->{handler} } @astray],
        evidence  => ['static']
    );
    push @{$r->{findings}}, map { +{%$_, %with} } @{$r->{relative}} if @astray;
    my $name = ($r->{script} =~ m{([^/]+)\z})[0];
    push @{$r->{findings}},
        {kind => 'not-executable', line => 0, name => $name, evidence => ['static']}
        if !-x $r->{script} && grep { $_->{mode} eq 'cgi' } @{$r->{served}};
    return;
}

# Whether running it tells something: it is served by Registry, and it compiles
sub _runs ($r) {
    return 0 unless grep { $_->{mode} eq 'registry' } @{$r->{served}};
    return !grep         { $_->{kind} eq 'compile' } @{$r->{findings}};
}

# What the server's error log says about the script and its libraries
sub _evidence_of_log ($r, $text) {
    for my $file ($r->{script}, @{$r->{libraries}}) {
        _merge($r, 'log',
            map { $file eq $r->{script} ? $_ : {%$_, file => $file} }
                Perennial::Doctor::Log::findings($text, $file));
    }
    return;
}

# What running it showed, and what the runs' log said
sub _evidence_of_run ($r) {
    my ($handler) = map { $_->{handler} // () } grep { $_->{mode} eq 'registry' } @{$r->{served}};
    my ($found, $log)
        = Perennial::Doctor::Dynamic->run($r->{script}, $r->{fields},
        $handler // 'Perennial::Registry', $SECONDS);
    _merge($r, 'dynamic', @$found, Perennial::Doctor::Log::findings($log, $r->{script}));
    return;
}

# Findings from more evidence: one already found (the same kind and name) says so too. What
# the log says of something the compiled code showed to be harmless (perl's "will not stay
# shared" for a my that only holds constants, the /o of a constant pattern) is left out.
sub _merge ($r, $evidence, @found) {
    my %dismissed = map { ("$_->{kind} $_->{name}" => 1) } @{$r->{dismissed} // []};
    for my $f (grep { !$dismissed{"$_->{kind} $_->{name}"} } @found) {
        my ($same)
            = grep { $_->{kind} eq $f->{kind} && $_->{name} eq $f->{name} } @{$r->{findings}};
        if (!$same) { push @{$r->{findings}}, {%$f, evidence => [$evidence]}; next }
        push @{$same->{evidence}}, $evidence unless grep { $_ eq $evidence } @{$same->{evidence}};
        $same->{seen} //= $f->{seen} if defined $f->{seen};
        $same->{line} = $f->{line}   if !$same->{line};
    }
    return;
}

sub _first_line ($error) { (split /\n/, $error)[0] // 'unknown error' }

1;

__END__

=head1 NAME

Perennial::Doctor - which CGI scripts are safe to run resident, and in which mode

=head1 SYNOPSIS

    my @results = Perennial::Doctor::report({run => 1},
        map { {script => $_, served => [{mode => 'registry'}]} } Perennial::Doctor::scripts(@ARGV));
    print Perennial::Doctor::Report::table(\@results);

=head1 DESCRIPTION

The examination behind C<perennial doctor> (see L<Perennial::Manual::Scripts>): each script is
compiled as Registry compiles it, in a process of its own, with the libraries it requires
(L<Perennial::Doctor::Static>); with C<run>, it is run too (L<Perennial::Doctor::Dynamic>); with
C<log>, a server's error log is read (L<Perennial::Doctor::Log>). A finding that more than one
of them found lists each in its C<evidence>. L<Perennial::Doctor::Report> prints the results.

=cut
