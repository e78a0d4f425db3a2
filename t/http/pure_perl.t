use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(start_server wait_until);

# The Perl twins of the hot path's C functions (Perennial::HTTP::Core, and the executor's
# Environment, Signals and Output) serve as the C ones do: with PERENNIAL_PURE_PERL set, a
# server says it runs them, the HTTP tests and the scripts' environment and output tests pass
# again on them, and the malformed-request corpus is refused as Apache refuses it. (Without the C functions
# built, every test runs on the Perl ones already.)
local $ENV{PERENNIAL_PURE_PERL} = 1;

my $srv = start_server(app => 'pid.psgi');
wait_until(sub { $srv->error_log =~ /listening on .*hot path in (\w+)/ }, 10, 'start line');
like $srv->error_log, qr/listening on .*\(Perennial [^,]+, hot path in Perl\)/,
    'the start line says which implementation runs';
like $srv->get('/')->{content}, qr/\A\d+/, 'and it serves';
$srv->stop;

my @files = (
    (grep { !m{/(?:core|pure_perl)\.t\z} } glob('t/http/*.t')),
    't/psgi/suite.t',    't/apache/malformed.t',
    't/scripts/modes.t', 't/scripts/config.t', 't/scripts/safety.t',    # %ENV, %SIG
    't/scripts/server_env.t',                                           # %ENV's base
    't/scripts/cgi_pragmas.t',                                          # CGI.pm's pragmas
    't/scripts/perlrun_reads.t',                                        # stat, PerlRun's reads
    't/apache/cgi_output.t',                                            # print
    't/apache/modperl_handlers.t',                                      # $r->print, its head
    't/apache/modperl_api.t',                                           # APR::Table's tie
    't/scripts/inc.t', 't/scripts/dependencies.t',                      # %INC, libraries
    't/logs/formats.t'                                                  # access log lines
);
for my $file (@files) {
    my $out = `$^X -Ilib $file 2>&1`;
    is $?, 0, "$file passes on the Perl functions" or diag $out;
}

done_testing;
