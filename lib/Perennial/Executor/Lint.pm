package Perennial::Executor::Lint;
use v5.36;

# What staying resident will do to a script that it would not notice under mod_cgi, said once
# in the error log: a regex with /o keeps the first request's pattern for the life of the
# worker, and a file handle left open in a package global stays open (with its locks) from one
# request to the next.

my %STANDARD = map { $_ => 1 } qw(STDIN STDOUT STDERR DATA ARGV ARGVOUT);

# A match or qr with /o after =~, !~, qr, "(" or ",". Written as (?:=~|!~|\bqr|\(|,)... the
# engine had no first character to look for and cost 870 instructions a byte (0.2 s for a
# 690 KB script); led by the class of those first characters, it gives the same matches (1,263
# scripts and modules compared) at a fraction.
my $O_MATCH
    = qr{[=!(,q](?:(?<=[=!])~|(?<=q)(?<!\w.)r|(?<=[(,]))\s*(?:m|qr)?/(?:\\.|[^/\n])*/[a-z]*o[a-z]*\b};

# Read in the source when a script compiles to stay resident
sub compile_notes ($code) {
    my @notes;
    push @notes,
        'uses the /o regex flag: the pattern is compiled once per worker and keeps the value it had'
        . ' on the first request'
        if $code =~ $O_MATCH
        || $code =~ m{(?:=~|!~)\s*s/(?:\\.|[^/\n])*/(?:\\.|[^/\n])*/[a-z]*o[a-z]*\b};
    return @notes;
}

# The package's file handles that are still open after a request
sub open_handles ($package) {
    my $stash = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the script's own symbol table
        \%{"${package}::"};
    };
    my @open;
    for my $name (sort keys %$stash) {
        next if $STANDARD{$name} || $name =~ /::\z/;
        my $glob = $stash->{$name};
        next unless ref \$glob eq 'GLOB' && *{$glob}{IO};
        push @open, $name if defined fileno *{$glob}{IO};
    }
    return @open;
}

1;

__END__

=head1 NAME

Perennial::Executor::Lint - what persistence will do to a script, said once

=head1 SYNOPSIS

    $log->warn("$file: $_") for Perennial::Executor::Lint::compile_notes($source);
    my @names = Perennial::Executor::Lint::open_handles($package);

=head1 DESCRIPTION

Under Registry a script's package lives as long as the worker. The executor asks this module,
once per compile, whether the source uses the C</o> regex flag (the pattern is interpolated
once and then frozen, the mod_perl Guide's warning), and after the script's first request
whether a file handle in its package is still open (its descriptor and any lock it holds stay
with the worker until the handle is reopened or the worker exits). Each answer is one warning
in the error log; nothing is changed.

=head1 FUNCTIONS

=head2 compile_notes

    my @notes = Perennial::Executor::Lint::compile_notes($source);

=head2 open_handles

    my @names = Perennial::Executor::Lint::open_handles('Perennial::ROOT::...::hello_2epl');

=cut
