use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(scratch_dir script_location start_server write_file);

# Apache::DBI, as a mod_perl site loads it (PerlModule, connect_on_init in a startup file): each
# worker connects once in its child init and keeps the handle for every request, and a request
# that leaves a transaction open has it rolled back by the cleanup Apache::DBI pushes
plan skip_all => 'Apache::DBI and DBD::SQLite are not installed (make test installs them)'
    unless eval { require Apache::DBI; require DBD::SQLite; 1 };
my $dir = scratch_dir();
my $db  = "$dir/data/site.db";
mkdir "$dir/data" or die "Can't mkdir: $!";
require DBI;
DBI->connect("dbi:SQLite:dbname=$db", '', '', {RaiseError => 1})->do('create table t (n integer)');
chmod 0777, "$dir/data";
chmod 0666, $db;
system("chmod a+rx $dir") == 0 or die;
write_file("$dir/startup.pl", <<"PERL");
use Apache::DBI;
Apache::DBI->connect_on_init('dbi:SQLite:dbname=$db', '', '', {AutoCommit => 0, RaiseError => 1});
1;
PERL
write_file("$dir/cgi/db.pl", <<"PERL", 0755);
#!/usr/bin/perl
use strict;
use DBI;
my \$dbh = DBI->connect('dbi:SQLite:dbname=$db', '', '', {AutoCommit => 0, RaiseError => 1});
my (\$rows) = \$dbh->selectrow_array('select count(*) from t');
\$dbh->do('insert into t values (1)');    # Never committed
print "Content-Type: text/plain\\n\\nhandle=\$dbh rows=\$rows\\n";
PERL
my $srv = start_server(workers => 1, conf => <<"CONF");
PerlModule Apache::DBI
PerlRequire $dir/startup.pl
@{[script_location('/registry', "$dir/cgi")]}
CONF
my @got = map { $srv->get('/registry/db.pl')->{content} } 1 .. 3;
like $got[0], qr/\Ahandle=Apache::DBI::db=HASH\(0x[0-9a-f]+\) rows=0\n\z/,
    'the script runs, with a handle Apache::DBI gave';
is $got[1], $got[0], 'the same handle on the next request: Apache::DBI keeps it';
is $got[2], $got[0], 'and the open transaction was rolled back after each request';
unlike $srv->error_log, qr/\[error\]/, 'no error logged';
$srv->stop;
done_testing;
