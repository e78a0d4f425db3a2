package Perennial::Doctor;
use v5.36;
use File::Spec ();
use JSON::PP   ();
use POSIX      ();
use Perennial::Executor::Compiler;
use Perennial::Doctor::Findings;
use Perennial::Doctor::Static;

# perennial doctor: which CGI scripts are safe to run resident, and in which mode. Each script
# is compiled as Registry compiles it, in a process of its own (its BEGIN blocks and the
# modules it loads stay there), and its optree is examined (Perennial::Doctor::Static).

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

# One script's findings, each explained (Perennial::Doctor::Findings), in line order
sub examine ($path) {
    pipe(my $in, my $out) or die "Can't make a pipe: $!\n";
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        close $in;
        my $found = eval { [_static($path)] }
            // [{kind => 'compile', line => 0, name => _first_line($@)}];
        print {$out} JSON::PP->new->canonical->encode($found);
        close $out;
        POSIX::_exit(0);
    }
    close $out;
    my $json = do { local $/; <$in> };
    waitpid $pid, 0;
    my $found
        = length $json
        ? JSON::PP->new->decode($json)
        : [{kind => 'compile', line => 0, name => "its examination ended with status $?"}];
    return map { Perennial::Doctor::Findings::explain({%$_, evidence => 'static'}) } @$found;
}

sub _static ($path) {
    open(my $fh, '<:raw', $path) or die "Can't read: $!\n";
    my $source = do { local $/; <$fh> };
    my @warnings;
    local $SIG{__WARN__} = sub ($msg) { push @warnings, $msg };
    my ($dir) = $path =~ m{\A(.*)/};
    chdir $dir if defined $dir;
    my $compiled = Perennial::Executor::Compiler->compile(
        path     => $path,
        package  => 'Perennial::Doctor::Examined',
        source   => $source,
        closures => 1
    );
    return Perennial::Doctor::Static::findings($compiled, \@warnings, $path);
}

sub _first_line ($error) { (split /\n/, $error)[0] // 'unknown error' }

# The findings that make a script ({script, findings}) unsafe in $mode
sub unsafe ($result, $mode) {
    return grep { Perennial::Doctor::Findings::unsafe_in($mode, $_) } @{$result->{findings}};
}

# The report for a terminal: per script, each finding with its line, what it does and the fix
sub table ($results, $mode) {
    my $out = '';
    for my $r (@$results) {
        my @unsafe = unsafe($r, $mode);
        $out
            .= sprintf "%s: %s\n", $r->{script},
            @unsafe
            ? 'unsafe under ' . ucfirst($mode) . " (" . scalar(@unsafe) . ')'
            : 'safe under ' . ucfirst($mode);
        for my $f (@{$r->{findings}}) {
            $out .= sprintf "  line %-4d %-8s %s [%s]\n           fix: %s\n", $f->{line},
                $f->{level}, $f->{does}, $f->{evidence}, $f->{fix};
        }
    }
    return $out;
}

sub json ($results, $mode) {
    my @scripts = map {
        +{  script   => $_->{script},
            mode     => $mode,
            safe     => unsafe($_, $mode) ? JSON::PP::false : JSON::PP::true,
            findings => $_->{findings},
        }
    } @$results;
    return JSON::PP->new->canonical->pretty->encode({scripts => \@scripts});
}

1;

__END__

=head1 NAME

Perennial::Doctor - which CGI scripts are safe to run resident, and in which mode

=head1 SYNOPSIS

    my @results = map { {script => $_, findings => [Perennial::Doctor::examine($_)]} }
        Perennial::Doctor::scripts(@ARGV);
    print Perennial::Doctor::table(\@results, 'registry');

=head1 DESCRIPTION

The examination behind C<perennial doctor> (see L<Perennial::Manual::Scripts>): each script is
compiled as Registry compiles it, in a process of its own, and what its optree shows is
reported with the line, what it does under Registry and the fix.

=cut
