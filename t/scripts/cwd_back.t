use v5.36;
use Test::More;
use Cwd                   qw(abs_path getcwd);
use HTTP::Request::Common qw(GET);
use Plack::Test;
use Perennial::Config;
use Perennial::Executor;
use Perennial::Log;

# A script that changes the working directory under ModPerl::Registry (which does not run
# scripts in their own directory, as mod_perl's does not) leaves it changed for the scripts
# the worker runs next under mod_perl; Perennial puts it back after the request
my $home = getcwd();
my $log  = Perennial::Log->new(config => Perennial::Config->new(log_level => 'error'));
for my $policy ([registry => 'mtime', 0], [perlrun => 'never', 1]) {
    my ($mode, $cache, $flush) = @$policy;
    my $app = Perennial::Executor->new(
        root   => abs_path('t/cgi-bin'),
        log    => $log,
        name   => $mode eq 'registry' ? 'ModPerl::Registry' : 'ModPerl::PerlRun',
        policy => {cache => $cache, flush => $flush, reset_inc => $flush, chdir => 0},
    )->to_app;
    test_psgi $app, sub ($cb) {
        is $cb->(GET '/chdir.pl')->content, "moved\n", "$mode: the script ran";
        is getcwd(),                        $home,     "$mode: the working directory is back";
        is $cb->(GET '/chdir.pl')->content, "moved\n", "$mode: and again";
        is getcwd(),                        $home,     "$mode: back again";
    };
}

done_testing;
