package Perennial::Executor::Compiler::Fresh;

# A script compiles as the start of a new file would: this file has no pragmas, so the string
# eval below starts with none. Under `no strict; no warnings` a script saw strictures and
# warnings explicitly off, where a new perl has them merely not on: `use 5.012` then left strict
# off (perl turns it on unless a file turned it off by name), and perl copied the pragmas'
# hints at every block the script opened (39k instructions of a PerlRun hello.pl compile).
## no critic (RequireUseStrict RequireUseWarnings ProhibitStringyEval RequireArgUnpacking)

# The code the text compiles to, or undef with $@ set; $_[0], not a copy: a lexical here would
# be visible to the script
sub compile_text {
    return eval $_[0];
}

1;

__END__

=head1 NAME

Perennial::Executor::Compiler::Fresh - compile a script's text with the pragmas of a new file

=head1 SYNOPSIS

    my $code = Perennial::Executor::Compiler::Fresh::compile_text($text) or die $@;

=head1 DESCRIPTION

Compiles Perl text in a scope with no pragmas at all: no C<strict>, C<warnings> or C<feature>
named either way, perl's default features, as at the top of a script run by C<perl>.

=cut
