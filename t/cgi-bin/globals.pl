#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "ALRM=", (defined $SIG{ALRM} ? $SIG{ALRM} : 'undef'), " RS=",
    (defined $/ ? length $/ : 'undef'),
    " OFS=", (defined $, ? "'$,'" : 'undef'), " umask=", sprintf('%03o', umask), "\n";
my @ls = (1, 2);
my %ss = ("a$;b" => 1);
print "ORS=", (defined $\ ? "'$\'" : 'undef'), " LS=@ls SS=",
    (exists $ss{"a\034b"} ? 'FS' : 'other'),
    " ERR=", (length $@ ? 'set' : 'empty'), " W=$^W T=", (time - $^T < 600 ? 'fresh' : 'old'),
    " INC=", ((grep { $_ eq '/globals/leaked' } @INC) ? 'leaked' : 'clean'), " ARGV=",
    scalar(@ARGV), "\n";
$SIG{ALRM} = sub { };
$/         = undef;
$,         = ',';
$\         = '!';
$"         = '-';
$;         = ':';
$@         = 'left over';
$^W        = 1;
$^T        = 0;
push @INC, '/globals/leaked';
push @ARGV, 'left', 'over';
umask 077;
