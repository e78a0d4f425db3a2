use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use Perennial::Test qw(raw_request scratch_dir start_server write_file);

# No access rule can be bypassed by how a configuration is split: every section that matches
# a request applies, in Apache's order, whatever it holds and wherever it was written
my $psgi = abs_path('t/psgi/pid.psgi');
my $root = scratch_dir();
mkdir "$root/$_" or die $! for qw(docs docs/private cgi);
write_file("$root/docs/index.html",       "<h1>home</h1>\n");
write_file("$root/docs/notes.txt",        "notes\n");
write_file("$root/docs/private/plan.txt", "the plan\n");
write_file("$root/docs/.htpasswd",        "user:secret\n");
write_file("$root/docs/report.secret",    "secret\n");
write_file("$root/cgi/hello.pl",
    qq{#!/usr/bin/perl\nprint "Content-Type: text/plain\\n\\nhello\\n";\n}, 0755);

# A rule in an included file applies as well
write_file("$root/extra.conf", "<Files \"*.secret\">\n    Require all denied\n</Files>\n");

my $srv = start_server(workers => 1, conf => <<"CONF");
DocumentRoot $root/docs
Alias /cgi $root/cgi
Include $root/extra.conf
<Location /server-status>
    SetHandler server-status
    Require all granted
</Location>
<Location /server-status>
    Require all denied
</Location>
<Location /app>
    SetHandler psgi
    PSGIApp $psgi
</Location>
<LocationMatch "^/app/admin">
    Require all denied
</LocationMatch>
Redirect /app/old /notes.txt
<Directory $root/docs/private>
    Require all denied
</Directory>
<FilesMatch "^\\.ht">
    Require all denied
</FilesMatch>
<Directory $root/cgi>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Directory>
<Location /cgi/hello.pl>
    Require ip 10.9.9.9
</Location>
CONF

my %want = (
    '/server-status'           => 403,
    '/server-status?auto'      => 403,
    '/app/x'                   => 200,
    '/app/admin'               => 403,
    '/app/admin/users'         => 403,
    '/app/old'                 => 302,
    '/app/administrator'       => 403,
    '/notes.txt'               => 200,
    '/private/plan.txt'        => 403,
    '/private/'                => 403,
    '/private/missing.txt'     => 403,
    '/.htpasswd'               => 403,
    '/report.secret'           => 403,
    '/cgi/hello.pl'            => 403,
    '/cgi/hello.pl/extra/path' => 403,
);
my %got = map { $_ => $srv->status_of($_) } keys %want;
is_deeply \%got, \%want, 'every request is answered as the sections that match it say';

# Again: a URL's way is kept after its first request, and one with nothing on it goes straight
# to its script or application (Dispatch's direct plans)
%got = map { $_ => $srv->status_of($_) } keys %want;
is_deeply \%got, \%want, 'and the second time, by the way kept';
my $log = $srv->error_log;
like $log, qr/denied by Require \(\S+perennial\.conf line 12\): GET \/server-status/,
    'the refusal names the second <Location /server-status>, which holds the rule';
like $log, qr/denied by Require \(\S+extra\.conf line 1\): GET \/report\.secret/,
    'and a rule from an included file names that file';
$srv->stop;

subtest 'a later section can open what an earlier one closed, as in Apache' => sub {
    my $srv = start_server(workers => 1, conf => <<"CONF");
DocumentRoot $root/docs
<Directory $root/docs>
    Require all denied
</Directory>
<Location /notes.txt>
    Require all granted
</Location>
<Location /index.html>
    <RequireAll>
        Require all granted
        Require ip 10.9.9.9
    </RequireAll>
</Location>
CONF
    for my $time ('', ', again') {    # The second time by the way kept
        is $srv->status_of('/notes.txt'), 200, "a <Location> is merged after the <Directory>$time";
        is $srv->status_of('/index.html'), 403,
            "the rest stays closed: all granted inside a <RequireAll> is not everyone$time";
    }
    $srv->stop;
};

done_testing;
