#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
print "ALRM=", (defined $SIG{ALRM} ? $SIG{ALRM} : 'undef'), " RS=",
    (defined $/ ? length $/ : 'undef'),
    " OFS=", (defined $, ? "'$,'" : 'undef'), " umask=", sprintf('%03o', umask), "\n";
$SIG{ALRM} = sub { };
$/         = undef;
$,         = ',';
umask 077;
