package Perennial::Doctor::Report;
use v5.36;
use Cwd      ();
use JSON::PP ();
use Perennial::Doctor::Findings;

# perennial doctor's verdicts and its two reports: a table for a terminal, JSON for tools. A
# result is {script, served => [{mode, url, where}], findings => [explained], libraries,
# library_of} (Perennial::Doctor::report).

# The findings that make a script ({script, findings}) unsafe in $mode
sub unsafe ($result, $mode, $handler = undef) {
    return if $result->{library_of};
    return
        grep { Perennial::Doctor::Findings::unsafe_in($mode, $_, $handler) } @{$result->{findings}};
}

# Per mode (and handler) the script is served in: {mode, handler, urls, where, unsafe => number
# of findings}
sub verdicts ($result) {
    my (%by, @keys);
    for my $how (@{$result->{served}}) {
        my $key = join ' ', $how->{mode}, $how->{handler} // '';
        my $v   = $by{$key} //= do {
            push @keys, $key;
            {   mode    => $how->{mode},
                handler => $how->{handler},
                urls    => [],
                where   => [],
                unsafe  => scalar unsafe($result, $how->{mode}, $how->{handler})
            };
        };
        push @{$v->{urls}}, $how->{url} if defined $how->{url};
        push @{$v->{where}}, $how->{where}
            if defined $how->{where} && !grep { $_ eq $how->{where} } @{$v->{where}};
    }
    return map { $by{$_} } @keys;
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
        $out .= _finding($_, @{$r->{served}}) for @{$r->{findings}};
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

# One finding: where, its level, what it does and the evidence, what was seen, the fix
# (an unsafe kind of finding is 'fine' in the modes the script is served in when it is unsafe in
# none of them: a global under PerlRun)
sub _finding ($f, @served) {
    my $where
        = join ' ', ($f->{file} ? ($f->{file} =~ m{([^/]+)\z})[0] : ()),
        $f->{lines}  ? 'lines ' . join(',', @{$f->{lines}})
        : $f->{line} ? "line $f->{line}"
        :              ();
    my $fine = $f->{level} eq 'unsafe'
        && !grep { Perennial::Doctor::Findings::unsafe_in($_->{mode}, $f, $_->{handler}) } @served;
    my $level = $fine ? 'fine' : $f->{level};
    my $out   = sprintf "  %-14s %-8s %s [%s]\n", $where, $level, $f->{does},
        join(', ', @{$f->{evidence}});
    $out .= "      seen: $f->{seen}\n" if defined $f->{seen};
    return $out . "      fix: $f->{fix}\n";
}

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

Perennial::Doctor::Report - perennial doctor's verdicts, as a table or as JSON

=head1 SYNOPSIS

    my @results = Perennial::Doctor::report({}, {script => $path, served => [{mode => 'registry'}]});
    print Perennial::Doctor::Report::table(\@results);
    exit 1 if grep { Perennial::Doctor::Report::any_unsafe($_) } @results;

=head1 DESCRIPTION

A script is unsafe in a mode when one of its findings is (L<Perennial::Doctor::Findings>); a
library another script requires is never unsafe on its own. C<table> prints, per script, its
verdict in each mode it is served in, then each finding with where it is, what it does, its
evidence (C<static>, C<dynamic>, C<log>), what was seen and the fix. C<json> gives the same as
C<{scripts => [{script, safe, modes => [{mode, safe, urls, where, unsafe}], findings,
libraries, library_of}]}>.

=cut
