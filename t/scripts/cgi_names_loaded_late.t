use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(in_process_get resident_app scratch_dir write_script);

# A script that loads CGI.pm as it runs (require, then import, on its first request only), the
# first in the process to load it: its import_names empties the namespace first from its
# second request on too, as CGI.pm's does under mod_perl (t/apache/import_names.t compares the
# usual ways with Apache)
ok !$INC{'CGI.pm'}, 'CGI.pm is not loaded before the script';

my $dir = scratch_dir();
write_script("$dir/late.pl", <<'PL', time - 10);
our $loaded;
if (!$loaded++) { require CGI; CGI->import(':cgi') }
import_names('Q');
print header('text/plain'), 'a=', (defined $Q::a ? $Q::a : 'none'), "\n";
PL

my $app = resident_app('registry', $dir);
my $get
    = sub ($query) { join '', @{in_process_get($app, '/registry', "late.pl$query")->[2] // []} };
is $get->('?a=1'), "a=1\n",    'the first request has its parameter';
is $get->(''),     "a=none\n", 'the next, without it, has none';
is $get->('?b=2'), "a=none\n", 'nor the one after';
done_testing;
