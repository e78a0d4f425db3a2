use v5.36;
use lib 't/lib';
use Test::More;
use File::Copy              qw(copy);
use MIME::Base64            qw(encode_base64);
use Perennial::Test         qw(scratch_dir start_server write_file);
use Perennial::Test::Apache qw(answer_of apache_available apache_head start_apache);

# Scripts written against mod_perl 2's API (t/modperl/), run by ModPerl::Registry under
# Apache + mod_perl 2 and by Perennial's Registry and PerlRun: every answer (status, the
# headers a script set, body) must be the same
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();
my $dir     = scratch_dir();
my $scripts = "$dir/scripts";
mkdir $scripts     or die "Can't mkdir $scripts: $!";
copy($_, $scripts) or die "Can't copy $_: $!" for glob 't/modperl/*';
utime 1_000_000_000, 1_000_000_000, glob "$scripts/*";    # Whole seconds: the ETags compare exactly
system("chmod -R a+rX $dir") == 0 or die;

system('htpasswd', '-cbm', "$dir/users", 'alice', 'api-secret') == 0 or die 'htpasswd failed';
chmod 0644, "$dir/users" or die "$dir/users: $!";         # Apache's children read it as www-data
my $guarded = <<"CONF";    # The same scripts behind Basic authentication
Alias /guarded $scripts
<Location /guarded>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
    Options +ExecCGI
    AuthType Basic
    AuthName "API realm"
    AuthUserFile $dir/users
    Require valid-user
</Location>
CONF
my $section = <<'CONF';
    SetHandler perl-script
    PerlOptions +ParseHeaders
    Options +ExecCGI
    PerlSetVar Greeting hello
    PerlAddVar Multi one
    PerlAddVar Multi two
CONF
write_file(
    "$dir/apache.conf",
    apache_head($dir, 'API_PORT',
        qw(authz_core authz_user authn_core authn_file auth_basic alias mime perl))
        . <<"CONF");
ServerAdmin admin\@example.test
Define APITEST
LogLevel warn
PerlSetVar ServerWide everywhere
Alias /registry $scripts
<Directory $scripts>
    Require all granted
</Directory>
<Location /registry>
    PerlResponseHandler ModPerl::Registry
$section</Location>
$guarded
CONF
my $run = scratch_dir();
my ($apid, $aport) = start_apache("$dir/apache.conf", 'API_PORT', SITE_RUN => $run)
    or BAIL_OUT('Apache did not start');
my $srv = start_server(workers => 1, conf => <<"CONF");
ServerName localhost
ServerAdmin admin\@example.test
Define APITEST
LogLevel warn
PerlSetVar ServerWide everywhere
Alias /registry $scripts
Alias /perlrun $scripts
<Location /registry>
    PerlResponseHandler ModPerl::Registry
$section</Location>
<Location /perlrun>
    PerlResponseHandler ModPerl::PerlRun
$section</Location>
$guarded
CONF

my @requests = (
    ['GET',  '/fields.pl/extra/path?a=1&b=2', 'X-Test: yes'],
    ['GET',  '/head.pl'],
    ['GET',  '/headers_in.pl', 'X-Test: yes', 'Accept: text/plain', 'X-Trail-: end'],
    ['HEAD', '/head.pl'],
    map({ ['GET', "/noprint.pl?$_"] } qw(302 404 204 custom 200)),
    ['GET',  '/mixed.pl'],
    ['GET',  '/table.pl'],
    ['GET',  '/const.pl'],
    ['GET',  '/conditions.pl'],
    ['GET',  '/conditions.pl', 'If-Modified-Since: Sun, 09 Sep 2001 01:46:40 GMT'],
    ['GET',  '/conditions.pl', 'If-Modified-Since: Sat, 08 Sep 2001 01:46:40 GMT'],
    ['GET',  '/redirect.pl'],
    ['POST', '/io.pl', 'Content-Type: text/plain', 'hello body'],
    ['GET',  '/wide.pl'],
    ['GET',  '/utils.pl'],
    ['GET',  '/types.pl'],
    ['GET',  '/server_info.pl/more?x=1'],
);

# The fields a script's own choices decide; Date, Server, framing and keep-alive are the server's
my %COMPARED = map { $_ => 1 } qw(content-type location x-served-by x-multi set-cookie x-kept
    x-dropped x-from-r x-printed last-modified etag x-cgi content-language);

for my $req (@requests) {
    my ($method, $path, @rest) = @$req;
    my $want = answer_of($aport, \%COMPARED, $method, "/registry$path", @rest);

    # ModPerl::Registry returns the status a script set, and Apache then adds its page for that
    # status after the script's own body: Perennial sends the body alone
    $want->{body} =~ s/<!DOCTYPE HTML.*\z//s if $path eq '/head.pl';
    ok scalar(grep {/\Aetag: "[0-9a-f]+-[0-9a-f]+"\z/} @{$want->{head}}),
        "set_etag: Apache's ETag is there to compare"
        if $path eq '/conditions.pl' && !@rest;
    for my $mode (qw(registry perlrun)) {
        for my $round (1, 2) {
            my $got  = answer_of($srv->port, \%COMPARED, $method, "/$mode$path", @rest);
            my $what = "$method /$mode$path" . ($round == 2 ? ' (again)' : '');
            is $got->{status}, $want->{status}, "$what: status $want->{status}";
            is_deeply $got->{head}, $want->{head}, "$what: headers";
            is_deeply [split /\n/, $got->{body} =~ s{/$mode\b}{/registry}gr],
                [split /\n/, $want->{body}], "$what: body"
                or diag 'Perennial: ', $srv->error_log =~ /([^\n]*\[error\][^\n]*)/g, "\nApache: ",
                Perennial::Test::slurp("$run/error.log") =~ /([^\n]*\[:error\][^\n]*)/g;
        }
    }
}

# Behind Basic authentication: the section's AuthType, AuthName and Require, the credentials
subtest 'Apache2::Access in a Registry script under AuthType Basic' => sub {
    my @alice = ('Authorization: Basic ' . encode_base64('alice:api-secret', ''));
    for my $who ([], \@alice) {
        my $want = answer_of($aport,     {}, GET => '/guarded/auth.pl', @$who);
        my $got  = answer_of($srv->port, {}, GET => '/guarded/auth.pl', @$who);
        my $what = @$who ? 'with credentials' : 'without';
        is $got->{status},  $want->{status},   "$what: status $want->{status}";
        is $want->{status}, @$who ? 200 : 401, "$what: Apache answers as a guarded script does";
        is $got->{body},    $want->{body},     "$what: what the script saw" if @$who;
    }
};

# no_cache: Pragma and Cache-Control, and an Expires of now, as Apache's header filter adds
my %cache = map { $_ => 1 } qw(pragma cache-control);
my $want  = answer_of($aport,     {%cache, expires => 1}, GET => '/registry/types.pl');
my $got   = answer_of($srv->port, {%cache, expires => 1}, GET => '/registry/types.pl');
is_deeply [grep { !/\Aexpires:/ } @{$got->{head}}], [grep { !/\Aexpires:/ } @{$want->{head}}],
    'no_cache: ' . join(', ', grep { !/\Aexpires:/ } @{$want->{head}}) . ', as Apache';
is scalar(grep {/\Aexpires: \w{3}, \d\d \w{3} \d{4} [\d:]{8} GMT\z/} @{$got->{head}}),
    scalar(grep {/\Aexpires: /} @{$want->{head}}), '  and an Expires date, as Apache';
$srv->stop;

done_testing;
