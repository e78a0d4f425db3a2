use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir start_server);
use Perennial::Test::Apache qw(answer_of apache_available apache_serving script_site site_files);

# A directory asked for, as Apache's handler for it answers when no DirectoryIndex file is
# there: mod_cgi refuses to run it (403), ModPerl::Registry and PerlRun decline it and the core
# finds no file to send (404), and mod_autoindex lists nothing without Options Indexes (403).
# With an index file, that file; without the slash, a redirect to it. Each status is compared
# with Apache's for the same request, and each refusal is in Perennial's error log.
plan skip_all => 'apache2 is not installed (make test installs it)' unless apache_available();

my $dir = scratch_dir();
site_files(
    $dir,
    'cgi-bin/t.pl'         => qq{print "Content-Type: text/plain\\n\\nscript\\n";\n},
    'cgi-bin/sub/t.pl'     => qq{print "Content-Type: text/plain\\n\\nscript\\n";\n},
    'docs/s.txt'           => "static\n",
    'docs/bare/s.txt'      => "static\n",
    'docs/home/index.html' => "<p>home</p>\n",
);
my $conf = script_site($dir);
my ($apid, $aport) = apache_serving($dir, $conf, qw(authz_core alias autoindex cgi dir mime perl));
my $srv = start_server(workers => 1, conf => $conf);

my @asked = qw(/cgi-bin/ /cgi-bin/sub/ /cgi-bin/sub /registry/ /registry/sub/ /perlrun/sub/
    /bare/ /home/ /home);
my @want = map { answer_of($aport, {}, GET => $_)->{status} } @asked;
is_deeply \@want, [403, 403, 301, 404, 404, 404, 403, 200, 301],
    "Apache: mod_cgi's 403, Registry's and PerlRun's 404, autoindex's 403, the index, the slash";
for my $i (0 .. $#asked) {
    is answer_of($srv->port, {}, GET => $asked[$i])->{status}, $want[$i],
        "Perennial answers $asked[$i] as Apache does ($want[$i])";
}

# A method on a file: one HTTP registers but the file does not take is 405, one it does not
# register is unknown, 501 (Apache's default handler, M_INVALID)
for my $method (qw(DELETE BREW)) {
    my $want = answer_of($aport, {}, $method => '/s.txt')->{status};
    is $want, $method eq 'DELETE' ? 405 : 501, "Apache: $method on a file, $want";
    is answer_of($srv->port, {}, $method => '/s.txt')->{status}, $want, '  Perennial: the same';
}

my $log = $srv->error_log;
like $log, qr{\[error\] attempt to invoke directory as script: \Q$dir\E/cgi-bin/sub/},
    "mod_cgi's refusal is an error line, with the directory, as Apache's";
like $log,
    qr{\[info\] Attempt to serve directory: \Q$dir\E/cgi-bin/sub/ \(request GET /perlrun/sub/\)},
    "Registry's and PerlRun's 404 an info line, as Apache's core writes it";
like $log, qr{method BREW is not one HTTP registers, for the file \Q$dir\E/docs/s\.txt},
    'the unknown method is in the log';
like $log, qr{\[error\] Cannot serve directory \Q$dir\E/docs/bare/: No matching DirectoryIndex},
    "a static directory's refusal as mod_autoindex's";

$srv->stop;
kill 'TERM', $apid;
done_testing;
