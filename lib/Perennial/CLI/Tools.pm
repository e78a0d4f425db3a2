package Perennial::CLI::Tools;
use v5.36;
use File::Path   qw(make_path);
use Getopt::Long qw(GetOptionsFromArray);
use POSIX        qw(strftime);
use Perennial::Bench;
use Perennial::Bench::Chart  qw(svg);
use Perennial::Bench::Report qw(csv json knee series table);
use Perennial::Bench::Spec;

# perennial bench and perennial tune: their options, and where their results go

sub bench (@argv) {
    my %opt;
    GetOptionsFromArray(\@argv, \%opt, 'target=s@', 'out=s', 'quiet|q') or return 2;
    my $file = shift @argv;
    die "Usage: perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR]\n"
        if !defined $file || @argv;
    my $spec    = Perennial::Bench::Spec->load($file);
    my @targets = map { _target($_) } @{$opt{target} // []};
    my $bench   = Perennial::Bench->new(
        spec     => $spec,
        targets  => \@targets,
        progress => (!$opt{quiet} && -t STDERR) ? \*STDERR : undef
    );
    my $results = $bench->run;
    my $out     = $opt{out} // 'logs/bench-' . strftime('%Y%m%d-%H%M%S', localtime);
    my @files   = write_results($out, $spec, $results);
    print $spec->title ? $spec->title . "\n\n" : '';
    print table($results, fixed_settings($spec));
    printf "\nMeasured with %s. Results: %s\n", $results->[0]{tool} // $spec->tool,
        join(', ', @files);
    return 0;
}

# What stayed the same in every measurement, for under the table
sub fixed_settings ($spec) {
    return [
        $spec->fixed,
        [Concurrency => join ' ', $spec->concurrency],
        (   defined $spec->requests
            ? [Requests => $spec->requests]
            : [Duration => $spec->duration . ' s']
        ),
        [Warmup => $spec->warmup],
        [URL    => join ' ', $spec->urls],
    ];
}

# table.txt, results.csv, results.json and a chart per series (chart.svg, chart-2.svg ...)
sub write_results ($dir, $spec, $results) {
    make_path($dir);
    my %files = (
        'table.txt'    => table($results, fixed_settings($spec)),
        'results.csv'  => csv($results),
        'results.json' => json($results, {spec => $spec->file, title => $spec->title}),
    );
    my $n = 0;
    for my $s (series($results)) {
        my $knee = knee($s->{points});
        $s->{knee} = defined $knee ? $s->{points}[$knee]{x} : undef;
        $files{$n++ ? "chart-$n.svg" : 'chart.svg'} = svg($s, knee => $knee, title => $spec->title);
    }
    for my $name (sort keys %files) {
        open(my $fh, '>', "$dir/$name") or die "Can't write $dir/$name: $!\n";
        print {$fh} $files{$name};
        close $fh or die "Can't write $dir/$name: $!\n";
    }
    return map {"$dir/$_"} sort keys %files;
}

sub _target ($text) {
    my ($name, $url) = $text =~ /\A(\w[\w.-]*)=(.+)\z/ ? ($1, $2) : ($text, $text);
    return {name => $name, url => $url =~ s{/+\z}{}r};
}

1;

__END__

=head1 NAME

Perennial::CLI::Tools - the perennial bench and perennial tune commands

=head1 SYNOPSIS

    exit Perennial::CLI::Tools::bench('examples/heavy.bench', '--out', 'logs/heavy');

=head1 FUNCTIONS

=head2 bench

    perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR] [--quiet]

Runs the sweep, prints the table and writes C<table.txt>, C<results.csv>, C<results.json>
and C<chart.svg> (one chart per series) to C<--out> (default C<logs/bench-DATE-TIME>).

=head2 fixed_settings, write_results

=cut
