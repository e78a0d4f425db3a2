#!/usr/bin/perl
# The pragmas a script starts with, as a new perl gives them: none, so `use 5.012` turns
# strict on (it would not after an explicit `no strict`), and no warnings without -w
print "Content-Type: text/plain\n\n";
print eval q{$sloppy = 1; 1} ? "no strict\n" : "strict\n";
{
    use 5.012;
    print eval q{$undeclared = 1; 1} ? "use 5.012: no strict\n" : "use 5.012: strict\n";
}
my $warned = 0;
local $SIG{__WARN__} = sub { $warned++ };
my $sum = 1 + undef;
print "warnings: $warned\n";
