package Perennial::Executor::Compiler::Fresh;

# A script compiles as the start of a new file would, but for its warnings: this file has no
# pragma but `no warnings`, and the string eval below starts with its hints. Under `no strict` a
# script saw strictures explicitly off, where a new perl has them merely not on: `use 5.012`
# then left strict off (perl turns it on unless a file turned it off by name), and the feature
# pragmas' hints, which perl copies at every block the script opens, cost 39k instructions of a
# PerlRun hello.pl compile. Warnings are off here (the text turns them on for a script with -w)
# so that a script's code never warns by the worker's $^W (PerlSwitches -w, or a $^W = 1 left
# by another script): they live apart from the hints, and cost nothing to inherit, where a
# `no warnings` in the text cost each PerlRun compile 45k.
## no critic (RequireUseStrict RequireUseWarnings ProhibitStringyEval RequireArgUnpacking ProhibitNoWarnings)
no warnings;

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

Compiles Perl text in a scope with no C<strict> or C<feature> named either way, perl's default
features, as at the top of a script run by C<perl>, and warnings off (a text that wants them
says C<use warnings>), so that the worker's C<$^W> is not the script's.

=cut
