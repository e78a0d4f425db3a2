use v5.36;
use lib 't/lib';
use Test::More;
use Cwd             qw(abs_path);
use JSON::PP        ();
use Perennial::Test qw(start_server wait_until);

# perl-status: each worker's compiled scripts (even those of a worker that is not serving the
# page), memory, modules, @INC and the configuration, and never a secret value
local $ENV{PERENNIAL_TEST_SECRET} = 'topsecret-env-value';
my $cgi = abs_path('t/cgi-bin');
my $srv = start_server(app => 'pid.psgi', conf => <<"CONF");
StartServers 2
MinSpareServers 1
MaxSpareServers 2
MaxClients 2
PerlSetEnv DB_PASSWORD s3cret-config-value
Alias /cgi $cgi
<Location /cgi>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
</Location>
<Location /perl-status>
    SetHandler perl-status
</Location>
<Location /guarded>
    PerlSetVar ApiKey setvar-secret-value
    <RequireAll>
        Require host localhost
        Require not env BLOCKED
    </RequireAll>
</Location>
<VirtualHost *:*>
    ServerName other.test
    SetEnv HOST_TOKEN vhost-secret-value
</VirtualHost>
CONF
wait_until(sub { $srv->idle == 2 }, 10, 'two idle workers');

# Holds one worker, so that the next request goes to the other
sub hold ($seconds) {
    my $pid = fork // die "Can't fork: $!";
    if (!$pid) { $srv->get("/sleep/$seconds"); POSIX::_exit(0) }
    wait_until(sub { $srv->scoreboard =~ /W/ }, 10, 'one worker held');
    return $pid;
}

my $held     = hold(2);
my $compiler = $srv->get('/cgi/pid.pl')->{content} =~ s/\D//gr;
waitpid $held, 0;
wait_until(sub { $srv->idle == 2 }, 10, 'both idle again');
my ($other) = grep { $_ != $compiler } $srv->pids;

# Now the worker that compiled is held, and the other one answers
my $busy = do {
    my $pid = fork // die;
    if (!$pid) {
        my $sock = $srv->connect;
        print {$sock} "GET /sleep/2 HTTP/1.1\r\nHost: x\r\n\r\n";    # kept alive: same worker
        sleep 3;
        POSIX::_exit(0);
    }
    $pid;
};
my ($res, $view);
wait_until(
    sub {
        $res  = $srv->get('/perl-status?json');
        $view = JSON::PP->new->decode($res->{content});
        $view->{worker} == $other;
    },
    10,
    'the page served by the worker that did not compile'
);
waitpid $busy, 0;

subtest 'compiled scripts of each worker' => sub {
    my ($w) = grep { $_->{pid} == $compiler } @{$view->{workers}};
    ok $w, "worker $compiler is listed" or return;
    is $w->{serving}, 0, 'it is not the one serving the page';
    my ($s) = grep { $_->{file} eq "$cgi/pid.pl" } @{$w->{scripts}};
    ok $s, 'pid.pl is among its compiled scripts' or return;
    like $s->{package}, qr/\APerennial::ROOT::ModPerl::Registry::[\w:]+::pid_2epl\z/, 'its package';
    is $s->{mtime}, (stat "$cgi/pid.pl")[9], 'the file\'s mtime';
    cmp_ok abs($s->{compiled} - time), '<', 60, 'when it was compiled';
    like $s->{compile_ms}, qr/\A\d+(?:\.\d+)?\z/, 'how long it took (ms)';
    my ($me) = grep { $_->{pid} == $other } @{$view->{workers}};
    is_deeply $me->{scripts}, [], 'the serving worker compiled nothing';
};

subtest 'memory, modules, @INC and configuration' => sub {
    is scalar @{$view->{memory}}, 2, 'a memory row per worker';
    ok( (   grep { $_->{rss} > 0 && $_->{pss} > 0 && $_->{shared} > 0 && $_->{private} > 0 }
                @{$view->{memory}}
        ) == 2,
        'RSS, PSS, shared and private'
    );
    my %mod = map { $_->{name} => $_ } @{$view->{modules}};
    like $mod{'Perennial::Status::Perl'}{file}, qr{lib/Perennial/Status/Perl\.pm\z}, 'module file';
    like $mod{'HTTP::Parser::XS'}{version},     qr/\A\d/, 'module version';
    ok((grep {m{/lib\z}} @{$view->{inc}}), '@INC');
    is $view->{config}{max_clients}, 2, 'effective configuration';
    is_deeply $view->{config}{set_env}, {DB_PASSWORD => '(hidden)'}, 'PerlSetEnv names only';
    ok((grep { $_ eq 'PERENNIAL_TEST_SECRET' } @{$view->{env}}), 'environment names');
};

subtest 'no secret in either format' => sub {
    my $got = $srv->get('/perl-status');
    is $got->{status}, 200, 'the page answers with every kind of Require in the configuration';
    my $json = $srv->get('/perl-status?json');
    is $json->{status}, 200, 'so does ?json';
    my $html = $got->{content};
    like $html, qr{<h2 id="scripts">Compiled Registry scripts</h2>}, 'the HTML page';
    for my $page ($res->{content}, $html, $json->{content}) {
        unlike $page, qr/s3cret-config-value/, 'no PerlSetEnv value';
        unlike $page, qr/vhost-secret-value/,  'no SetEnv value of a virtual host';
        unlike $page, qr/setvar-secret-value/, 'no PerlSetVar value';
        unlike $page, qr/topsecret-env-value/, 'no environment value';
    }
};

$srv->stop;
done_testing;
