#!/usr/bin/perl
use v5.36;
use Cwd qw(realpath);
my $HOME;
BEGIN { $HOME = realpath(__FILE__) =~ s{/bench/[^/]+\z}{}r }
use lib "$HOME/lib", "$HOME/bench/lib";
use Time::HiRes ();
use Perennial::Config;
use Perennial::Executor;
use Perennial::Log;
use Perennial::Preload;
use Perennial::Bench::Options qw(options);

# The cost of running a script resident, without the network: the executor's PSGI app called
# in-process for one script, best of several rounds, in microseconds per request. No FindBin
# here: the executor sets FindBin's variables for each script when something loaded it, and
# the server does not. --preload CGI loads CGI.pm first, as a site's startup.pl (or PerlModule
# CGI) does: it then works through mod_perl's request object.

my %opt = (
    script    => 'hello.pl',
    requests  => 5000,
    rounds    => 5,
    check     => 'always',
    setup_env => 1,
    mode      => 'registry'
);
options(
    \%opt,
    'Usage: perl bench/executor.pl [--script hello.pl] [--mode registry|perlrun]'
        . ' [--check always|never|N] [--setup-env 0|1] [--requests 5000] [--rounds 5]'
        . ' [--preload CGI]',
    'script=s',
    'requests=i',
    'rounds=i',
    'check=s',
    'setup_env|setup-env=i',
    'mode=s',
    'preload=s'
);
die "--mode is registry or perlrun\n" unless $opt{mode} =~ /\A(?:registry|perlrun)\z/;

my $log = Perennial::Log->new(config => Perennial::Config->new(log_level => 'warn'));

# --preload NAME: loaded first by what loads `PerlModule NAME` in Perennial's manager (with
# MOD_PERL set, so that CGI.pm works through the request object, as under mod_perl)
Perennial::Preload->new(log => $log)->load(Perennial::Config->new(modules => [$opt{preload}]))
    if $opt{preload};
my $app = Perennial::Executor->new(
    root      => "$HOME/examples/cgi-bin",
    log       => $log,
    name      => $opt{mode} eq 'registry' ? 'ModPerl::Registry' : 'ModPerl::PerlRun',
    policy    => Perennial::Executor->policy_of($opt{mode}, 0),
    check     => $opt{check},
    setup_env => $opt{setup_env},
)->to_app;

# One empty body for every request, as the server keeps one (a handle opened for each request
# would cost what the server does not pay: perl empties its cache of class names for each)
open(my $in, '<', \'') or die "Can't open an empty body: $!\n";
my $request = sub {
    my %env = (
        REQUEST_METHOD    => 'GET',
        PATH_INFO         => "/$opt{script}",
        SCRIPT_NAME       => '/registry',
        REQUEST_URI       => "/registry/$opt{script}",
        QUERY_STRING      => '',
        SERVER_PROTOCOL   => 'HTTP/1.0',
        SERVER_NAME       => '127.0.0.1',
        SERVER_PORT       => 80,
        REMOTE_ADDR       => '127.0.0.1',
        REMOTE_PORT       => 1234,
        HTTP_HOST         => '127.0.0.1',
        HTTP_USER_AGENT   => 'ab',
        HTTP_ACCEPT       => '*/*',
        'psgi.url_scheme' => 'http',
        'psgi.input'      => $in,
    );
    my $res = $app->(\%env);
    $res->(sub ($r) { $r->[0] == 200 or die "status $r->[0]\n"; return }) if ref $res eq 'CODE';
};
$request->() for 1 .. 100;
my $best;
for (1 .. $opt{rounds}) {
    my $t0 = Time::HiRes::time();
    $request->() for 1 .. $opt{requests};
    my $us = (Time::HiRes::time() - $t0) / $opt{requests} * 1e6;
    $best = $us if !defined $best || $us < $best;
}
printf
    "%s under the %s executor: %.1f us per request (PerlScriptCheck %s, PerlSetupEnv %s), best of %d x %d\n",
    $opt{script}, $opt{mode}, $best, $opt{check}, $opt{setup_env} ? 'On' : 'Off', $opt{rounds},
    $opt{requests};
