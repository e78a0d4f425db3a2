use v5.36;
use lib 'lib';
use Test::More;
use B          ();
use B::Deparse ();
use Perennial::ModPerl;

# mod_perl's constants, in process: perl inlines them where code is compiled, as it does
# mod_perl's XS constants, and mod_perl 1's Apache::Constants are the same subs as
# Apache2::Const's, so that code importing a name from both gets no "redefined" warning

my @warned;
local $SIG{__WARN__} = sub { push @warned, @_ };
my $code = eval q{
    package Const::Both;
    use warnings;
    use Apache2::Const qw(OK NOT_FOUND);
    use Apache::Constants qw(OK NOT_FOUND);
    sub { return (OK, NOT_FOUND, Apache2::Const::DECLINED) }
} or die $@;    ## no critic (ProhibitStringyEval) code compiled as a handler module is
is_deeply [$code->()], [0, 404, -1], 'their values';
is_deeply \@warned, [],
    'a name imported from both Apache2::Const and Apache::Constants: no warning';
ok B::svref_2object(\&Apache2::Const::OK)->CvFLAGS & B::CVf_CONST(), 'a constant sub';
is \&Apache::Constants::OK, \&Apache2::Const::OK, 'mod_perl 1\'s the same sub as mod_perl 2\'s';
unlike B::Deparse->new->coderef2text($code), qr/\b(?:OK|NOT_FOUND|DECLINED)\b/,
    'inlined where the code calls them';

done_testing;
