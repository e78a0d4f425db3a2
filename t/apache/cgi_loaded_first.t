use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(http_request scratch_dir slurp wait_until write_file);
use Perennial::Test::Apache qw(answer_of apache_and_perennial apache_available);

# CGI.pm loaded at start with MOD_PERL set (PerlModule CGI), as the mod_perl Guide has it, and a
# module loaded so that imported CGI.pm's functions before the scripts compiled: Perennial's
# scripts run CGI.pm on their CGI variables (Perennial::Executor::CGIWraps), and every answer
# must be Apache + ModPerl::Registry's. The cases are where that path could differ: a handler
# module's CGI object after a script's request, an internal redirect's query, a module's own
# copies of import_names and header, the pragmas of the last `use CGI LIST`, -nph, $r->args set
# by the script, an upload's temporary file
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $dir = scratch_dir();
write_file("$dir/lib/My/Mod.pm", <<'PERL');
package My::Mod;
use CGI qw(:standard -utf8);
sub names { import_names('Q') }
sub head  { header(-type => 'text/plain', -attachment => "caf\xc3\xa9.txt") }
1;
PERL
write_file("$dir/lib/My/Params.pm", <<'PERL');
package My::Params;
use CGI ();
use Apache2::Const -compile => 'OK';
sub handler {
    my $r = shift;
    my $q = CGI->new;
    $r->content_type('text/plain');
    $r->print('handler: ', join(',', map { "$_=" . $q->param($_) } $q->param), "\n");
    return Apache2::Const::OK();
}
1;
PERL
write_file("$dir/lib/My/Env.pm", <<'PERL');
package My::Env;
use CGI ();
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use Apache2::Const -compile => 'OK';

# Under SetHandler modperl: CGI.pm given the request object sets %ENV up (subprocess_env)
sub handler {
    my $r = shift;
    my $q = CGI->new($r);
    $r->content_type('text/plain');
    $r->print(join(' ', 'y=' . ($q->param('y') // '-'),
        map { "$_=" . ($ENV{$_} // 'none') } qw(SCRIPT_NAME SCRIPT_FILENAME PATH_INFO)), "\n");
    return Apache2::Const::OK();
}
1;
PERL
my %script = (
    'params.pl' => q{use CGI (); my $q = CGI->new; print $q->header('text/plain'), 'params: ',
        join(',', map { "$_=" . $q->param($_) } $q->param), "\n";},
    'to_b.pl' =>
        q{use Apache2::SubRequest (); my $r = shift; $r->internal_redirect('/registry/b.pl');},
    'b.pl' => q{use CGI (); my $q = CGI->new; print $q->header('text/plain'), 'b: x=',
        $q->param('x') // '-', ' REDIRECT_QUERY_STRING=', $ENV{REDIRECT_QUERY_STRING} // '-',
        join('', map { " $_=" . ($ENV{$_} // '-') } qw(REDIRECT_STATUS REDIRECT_URL REQUEST_URI)),
        ' the_request=', Apache2::RequestUtil->request->the_request,
        "\n";},
    'names.pl' => q{use My::Mod (); My::Mod::names(); print CGI::header('text/plain'), 'a=',
        $Q::a // 'none', "\n";},
    'utf8.pl' => q{use CGI (); my $q = CGI->new; print $q->header('text/plain'), 'length=',
        length($q->param('s') // ''), "\n";},
    'modhead.pl' =>
        q{use My::Mod (); binmode STDOUT, ':encoding(UTF-8)'; print My::Mod::head(), "x\n";},
    'args.pl' => q{my $r = shift; $r->args('x=2'); use CGI (); my $q = CGI->new;
        print $q->header('text/plain'), 'x=', scalar $q->param('x'), "\n";},
    'to_nph.pl' =>
        q{use Apache2::SubRequest (); my $r = shift; $r->internal_redirect('/registry/nph.pl');},
    'nph.pl'    => q{use CGI qw(-nph); print CGI->new->header('text/plain'), "nph dropped\n";},
    'upload.pl' => q{use CGI (); my $q = CGI->new; my $fh = $q->upload('f');
        print $q->header('text/plain'), 'temp=', $q->tmpFileName($fh), "\n";},
    'env_query.pl' => q{$ENV{QUERY_STRING} = 'x=2'; use CGI (); my $q = CGI->new;
        print $q->header('text/plain'), 'x=', scalar $q->param('x'), "\n";},
    'own_stdin.pl' => q{use CGI (); local *STDIN; open STDIN, '<', \ 'x=3' or die;
        my $q = CGI->new; print $q->header('text/plain'), 'x=', scalar $q->param('x'), "\n";},
    'new_function.pl' =>
        q{use CGI (); my $q = CGI::new('CGI'); print $q->header('text/plain'), "ok\n";},
    'to_noenv.pl' => q{use Apache2::SubRequest (); my $r = shift;
        $r->internal_redirect('/noenv/noenv.pl?x=5');},
    'noenv.pl' => q{use CGI (); my $q = CGI->new; print $q->header('text/plain'), 'x=',
        $q->param('x') // '-', ' REQUEST_METHOD=', $ENV{REQUEST_METHOD} // 'none', "\n";},
    'pool_cleanup.pl' => qq{use CGI qw(:standard); my \$n = param('name');
        Apache2::RequestUtil->request->pool->cleanup_register(sub { open my \$f, '>', '$dir/out/pool'
        or die; print \$f 'Q=', (defined \$CGI::Q ? 'set' : 'undef'), ' params=',
        scalar(\@CGI::QUERY_PARAM), "\\n" });
        print header('text/plain'), "name=\$n\\n";},
    'pushed_cleanup.pl' =>
        qq{use CGI (); my \$q = CGI->new; \$q->r->push_handlers(PerlCleanupHandler
        => sub { my \$again = CGI->new; open my \$f, '>', '$dir/out/pushed' or die;
        print \$f 'name=', \$again->param('name') // 'none', "\\n"; 0 });
        print \$q->header('text/plain'), "ok\\n";},
    'unprinted.pl' => q{use CGI (); my $q = CGI->new;
        $q->header(-type => 'text/plain', -status => '403 Forbidden'); print "body\n";},
    'redirect.pl' => q{use CGI (); CGI->new->redirect('http://example.com/x');},
    'later.pl'    => q{use CGI (); my $q = CGI->new; my $head = $q->header(-type => 'text/plain',
        -status => '202 Accepted'); print "early\n"; print $head;},
);
mkdir "$dir/$_" or die "Can't mkdir: $!" for qw(out htdocs);
chmod 0777, "$dir/out";
write_file("$dir/cgi/$_", "$script{$_}\n", 0755) for keys %script;
system("chmod -R a+rX $dir") == 0 or die;
my ($apid, $aport, $srv) = apache_and_perennial($dir, <<"CONF");
PerlSwitches -I$dir/lib
PerlModule CGI My::Mod My::Params My::Env
DocumentRoot $dir/htdocs
Alias /registry $dir/cgi
<Location /registry>
  SetHandler perl-script
  PerlResponseHandler ModPerl::Registry
  PerlOptions +ParseHeaders
  Options +ExecCGI
</Location>
Alias /noenv $dir/cgi
<Location /noenv>
  SetHandler perl-script
  PerlResponseHandler ModPerl::Registry
  PerlOptions +ParseHeaders -SetupEnv
  Options +ExecCGI
</Location>
<Location /env>
  SetHandler modperl
  PerlResponseHandler My::Env
</Location>
<Location /params>
  SetHandler perl-script
  PerlResponseHandler My::Params
</Location>
CONF
my %compared = map { $_ => 1 } qw(content-type content-disposition);
for my $path (
    '/registry/params.pl?secret=alice', '/params?x=2',
    '/registry/to_b.pl?x=1',            '/registry/names.pl?a=1',
    '/registry/names.pl',               '/registry/utf8.pl?s=%C3%A9',
    '/registry/modhead.pl',             '/registry/args.pl?x=1',
    '/registry/nph.pl',                 '/registry/to_nph.pl',
    '/registry/env_query.pl?x=1',       '/registry/new_function.pl',
    '/registry/to_noenv.pl?x=1',        '/env?y=2',
    '/env/more?y=3'
    )
{
    my $want = answer_of($aport,     \%compared, GET => $path);
    my $got  = answer_of($srv->port, \%compared, GET => $path);
    is_deeply $got, $want, "GET $path: Apache's answer" or diag explain $got, $want;
}

# A body the script reads itself, and cleanups that run after CGI.pm's own reset, as CGI.pm
# registers it first: what each saw, under both servers
my @form = ('Content-Type: application/x-www-form-urlencoded', 'name=Ann&x=1');
my %seen;
for my $port ($aport, $srv->port) {
    my $server = $port == $aport ? 'apache' : 'perennial';
    unlink glob "$dir/out/*";
    $seen{$server}{stdin} = answer_of($port, \%compared, POST => '/registry/own_stdin.pl', @form);
    $seen{$server}{answers}
        = [map { answer_of($port, \%compared, POST => "/registry/$_.pl", @form) }
            qw(pool_cleanup pushed_cleanup)];
    wait_until(sub { -s "$dir/out/pool" && -s "$dir/out/pushed" }, 10,
        "the cleanups under $server");
    $seen{$server}{cleanups} = [map { slurp("$dir/out/$_") } qw(pool pushed)];
}
is_deeply $seen{perennial}, $seen{apache}, "a script's own STDIN, and what cleanups saw: Apache's"
    or diag explain \%seen;

# A head that CGI.pm's header sends itself under mod_perl, whether or not the script prints what
# it returns (Perennial only: ModPerl::Registry adds Apache's page for the status after the
# script's body, where Perennial answers as the script said)
my %expected = (
    unprinted => [403, "body\n"],
    redirect  => [302, ''],
    later     => [202, "early\n"]
);
for my $name (sort keys %expected) {
    my $got = answer_of($srv->port, \%compared, GET => "/registry/$name.pl");
    is_deeply [@$got{qw(status body)}], $expected{$name}, "$name.pl: the head went when made";
}

# The upload's temporary file is gone once the script's request has ended, as mod_perl's
# cleanup has it (Perennial only: Apache's file is its own)
my $form = "--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n"
    . "Content-Type: text/plain\r\n\r\nsecret upload\r\n--XX--\r\n";
my $res = http_request(
    $srv->port, 'POST', 'localhost', '/registry/upload.pl',
    body    => $form,
    headers => {'Content-Type' => 'multipart/form-data; boundary=XX'}
);
my ($temp) = $res->{body} =~ /\Atemp=(\S+)\n\z/;
ok $temp,     'the upload went to a temporary file' or diag $res->{raw};
ok !-e $temp, 'which is gone after the request';
unlike $srv->error_log, qr/\[error\]|uninitialized/, 'no error or warning logged';
kill 'TERM', $apid;
$srv->stop;
done_testing;
