use v5.36;
use lib 't/lib';
use Test::More;

# Debian's own Apache configuration, as the apache2 package installs it (apache2.conf,
# envvars, mods-enabled, conf-enabled, sites-enabled): Perennial reads it, says once what
# it ignores and why, and finds nothing it cannot honour
plan skip_all => 'Debian\'s apache2 is not installed (make test installs it)'
    unless -f '/etc/apache2/apache2.conf' && -f '/etc/apache2/envvars';
my $out
    = qx{sh -c '. /etc/apache2/envvars && exec $^X -Ilib bin/perennial configtest -c /etc/apache2/apache2.conf' 2>&1};
is $? >> 8, 0, 'configtest passes' or diag $out;
like $out, qr/^Syntax OK$/m, 'Syntax OK';
like $out, qr/accepted and ignored: .*LoadModule \(\d+ lines\): Perennial loads no Apache modules/,
    'the modules it loads are listed once';
like $out, qr/IndexOptions \(\S+autoindex\.conf line \d+\): Perennial makes no directory listings/,
    'and what mod_autoindex would have done, with the reason';
unlike $out, qr/unknown directive/, 'no directive is unknown';
done_testing;
