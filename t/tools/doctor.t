use v5.36;
use lib 't/lib';
use Test::More;
use JSON::PP        ();
use Cwd             ();
use File::Temp      qw(tempdir);
use Perennial::Test qw(perennial write_file);

# perennial doctor over a directory of scripts with one pitfall each, and clean ones: every
# finding with its line, nothing on the clean scripts, and the exit status a CI job reads

my $here = Cwd::getcwd();
my ($out, $code) = perennial('doctor', '--json', 't/doctor/scripts');
is $code, 1, 'exit status 1: some scripts are unsafe under Registry';
my $report = eval { JSON::PP->new->decode($out) } or BAIL_OUT("not JSON: $out");
my %by     = map { ($_->{script} =~ m{([^/]+)\z})[0] => $_ } @{$report->{scripts}};
my $kinds  = sub ($name) {
    join ', ', map {"$_->{kind} $_->{name} line $_->{line} ($_->{level})"} @{$by{$name}{findings}};
};

is $kinds->('clean.pl'),  '',                             'clean.pl: nothing';
is $kinds->('global.pl'), 'global $user line 5 (unsafe)', 'a global set only sometimes';
is $kinds->('grows.pl'), 'global @seen line 5 (unsafe), global $hits line 6 (unsafe)',
    'globals that grow';
is $kinds->('closure.pl'), 'closure $count line 8 (unsafe)', 'a file-level my in a named sub';
is $kinds->('regex_o.pl'), 'regex-o /o line 8 (unsafe)',     'a /o regex';
is $kinds->('handle.pl'), 'open-handle COUNTER line 7 (unsafe), flock COUNTER line 8 (unsafe)',
    'a global handle, locked';
is $kinds->('handled.pl'),
    'sig %SIG line 6 (handled), chdir chdir line 7 (handled), umask umask line 8 (handled), '
    . 'dollar0 $0 line 9 (handled), exit exit line 11 (handled)', 'what Perennial puts back';
like $kinds->('broken.pl'),
    qr/\Acompile Global symbol "\$undeclared" requires explicit package name.* \(unsafe\)\z/,
    'a script that does not compile, with perl\'s reason';
is_deeply [map { $_->{safe} ? 1 : 0 } @by{qw(clean.pl handled.pl global.pl)}], [1, 1, 0],
    'each script marked safe or not';
is $kinds->('old_clean.pl'), '',
    'old-style code that only looks like the pitfalls: globals reset first, foreach, a constant'
    . ' /o, handles closed, file-level my constants, ||=';
is $kinds->('formmail.pl'),
    'global %in line 11 (unsafe), global $message line 14 (unsafe), global %session line 15 (unsafe)',
    'a package the script declares: a hash filled key by key, a message never reset, one'
    . ' variable set on two lines; lists emptied with undef and loop variables are not reported';
is_deeply $by{'formmail.pl'}{findings}[2]{lines}, [15, 16], 'the lines of the one variable';
is $kinds->('caches.pl'), 'global $started line 6 (unsafe), open-handle DIR line 7 (unsafe)',
    'a global set with ||=, a directory handle left open';
is $kinds->('hard_exit.pl'),
    'hard-exit CORE::exit line 6 (unsafe), hard-exit POSIX::_exit line 7 (unsafe)',
    'exits that end the worker';
is $kinds->('uses_libs.pl'), 'lib-state %seen line 7 (unsafe), lib-state $visitors line 8 (unsafe)',
    'a library\'s file-level my that its subs change, found through the script that requires it';
is_deeply [map { ($_->{file} =~ m{([^/]+)\z})[0] } @{$by{'uses_libs.pl'}{findings}}],
    [('lib_state.pl') x 2], 'each said to be in the library';
is_deeply [map { (m{([^/]+)\z})[0] } @{$by{'uses_libs.pl'}{libraries}}],
    [qw(lib_state.pl lib_clean.pl lib_words.pl)],
    'its libraries, and the one a library requires; the one that only reads its variable is clean';
is_deeply [map { $by{$_}{safe} ? 1 : 0 } qw(lib_state.pl lib_clean.pl lib_words.pl)], [1, 1, 1],
    'a library is not reported as a script of its own';
is_deeply $by{'lib_words.pl'}{library_of},
    [map {"$here/t/doctor/scripts/$_"} qw(lib_clean.pl uses_libs.pl)],
    'but as a library of the scripts that load it';
my ($first) = @{$by{'global.pl'}{findings}};
like $first->{does}, qr/a request sees what the ones before it left/, 'what it does';
like $first->{fix},  qr/ModPerl::PerlRun/, 'and the fix, with the mode that runs it unchanged';
is_deeply $first->{evidence}, ['static'], 'labelled with its evidence';

($out, $code) = perennial('doctor', 't/doctor/scripts/clean.pl', 't/doctor/scripts/handled.pl');
is $code, 0, 'exit status 0 when every script is safe';
like $out, qr{handled\.pl: safe under Registry\n  line 6 +handled +%SIG is changed}, 'the table';

($out, $code) = perennial('doctor', '--mode', 'perlrun', 't/doctor/scripts/global.pl');
is $code, 0, 'under PerlRun the global is no danger';
($out, $code) = perennial('doctor', '--mode', 'perlrun', 't/doctor/scripts/broken.pl');
is $code, 1, 'a script that does not compile is unsafe in any mode';

($out, $code) = perennial('doctor', '--json', 'examples/cgi-bin');
$report = JSON::PP->new->decode($out);
my %unsafe = map { ($_->{script} =~ m{([^/]+)\z})[0] => $_->{safe} ? 0 : 1 } @{$report->{scripts}};
is_deeply [grep { $unsafe{$_} } sort keys %unsafe], [qw(closure.pl count.pl counter.pl)],
    'the examples: the three that show the pitfalls, and no other';
like $out, qr{"library_of" : \[\s*"[^"]*/counter\.pl"}, 'countlib.pl is counter.pl\'s library';

($out, $code) = perennial('doctor', '--timeout', 2, 't/doctor/slow/waits.pl');
is $code, 1, 'a script whose examination does not end is unsafe';
like $out, qr{waits\.pl: unsafe.*\n.*took longer than 2 seconds, and was stopped}, 'and why';

($out, $code) = perennial('doctor', 'no/such/dir');
is $code, 2, 'a path that is not there: 2, as for usage';
like $out, qr{No such script or directory: "no/such/dir"}, 'says so';
($out, $code) = perennial('doctor');
is $code, 2, 'no path: usage';
($out, $code) = perennial('doctor', '--mode', 'fastcgi', 't/doctor/scripts');
is $code, 2, 'an unknown mode: usage';
like $out, qr/no such mode: fastcgi/, 'which says so';
($out, $code) = perennial('doctor', '--timeout', 0, 't/doctor/slow');
is $code, 2, '--timeout 0 (which would wait for ever): usage';
($out, $code) = perennial('doctor', '--log', 't/doctor', 't/doctor/scripts');
is $code, 2, 'an error log that is a directory';
like $out, qr/Can't read the error log "t\/doctor": it is a directory/, 'says so';

# -c: the scripts a configuration serves, each in the modes it is served in, with the URL and
# the line that chose the handler; a directory served by no script handler is not examined
my $dir     = tempdir(CLEANUP => 1);
my $scripts = "$here/t/doctor/scripts";
my $conf    = write_file("$dir/doctor.conf", <<"CONF");
Alias /reg $scripts
Alias /run $scripts
ScriptAlias /cgi-bin/ $scripts/
Alias /static $here/t/doctor/slow
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
</Location>
<Location /run>
    SetHandler perl-script
    PerlResponseHandler ModPerl::PerlRun
</Location>
<VirtualHost *:80>
    ServerName other.example
    Alias /more $here/examples/cgi-bin
    <Location /more>
        SetHandler perl-script
        PerlResponseHandler ModPerl::Registry
    </Location>
</VirtualHost>
CONF
($out, $code) = perennial('doctor', '--json', '-c', $conf);
is $code, 1, '-c: some scripts are unsafe in a mode they are served in';
$report = JSON::PP->new->decode($out);
%by     = map { ($_->{script} =~ m{([^/]+)\z})[0] => $_ } @{$report->{scripts}};
ok !$by{'waits.pl'},                         'a directory served as static files is not examined';
ok $by{'hello.pl'} && $by{'hello.pl'}{safe}, 'a virtual host\'s scripts are';
my $modes = sub ($name) {
    join ', ',
        map { "$_->{mode} " . ($_->{safe} ? 'safe' : 'unsafe') . " @{$_->{urls}}" }
        @{$by{$name}{modes}};
};
is $modes->('global.pl'),
    'registry unsafe /reg/global.pl, perlrun safe /run/global.pl, cgi safe /cgi-bin/global.pl',
    'a script in each mode it is served in, with its URL';
is $modes->('broken.pl'),
    'registry unsafe /reg/broken.pl, perlrun unsafe /run/broken.pl, cgi unsafe /cgi-bin/broken.pl',
    'one that does not compile is unsafe in all of them';
like $by{'global.pl'}{modes}[0]{where}[0], qr{doctor\.conf line 5\z},
    'with the section that chose the handler';

($out, $code) = perennial('doctor', '-c', $conf, "$scripts/global.pl", "$scripts/handled.pl");
like $out,
    qr{\At/doctor/scripts/global\.pl:\n  unsafe under Registry \(1\): /reg/global\.pl \(.*doctor\.conf line 5\)\n.*\n  safe under CGI: /cgi-bin/global\.pl \(ScriptAlias\)\n},
    'the paths given choose among the scripts the configuration serves';
unlike $out, qr{clean\.pl}, 'and no others';
write_file($conf, <<"CONF");
Alias /run $scripts
<Location /run>
    SetHandler perl-script
    PerlResponseHandler ModPerl::PerlRun
</Location>
CONF
($out, $code) = perennial('doctor', '-c', $conf, "$scripts/global.pl");
is $code, 0, 'the global is no danger where the configuration runs it under PerlRun';
like $out, qr/\n  line 5 +fine +the package variable \$user/, 'and the table says it is fine there';

# What depends on the handler: a require of ./lib.pl where scripts do not run in their own
# directory (ModPerl::Registry, as mod_perl 2's); a script CGI would run that is not executable
my $site = tempdir(CLEANUP => 1);
write_file("$site/lib.pl", "sub lib_answer { 42 }\n1;\n");
write_file("$site/uses.pl",
    qq{require "./lib.pl";\nprint "Content-Type: text/plain\\n\\n", lib_answer();\n}, 0755);
write_file("$site/plain.pl", qq{print "Content-Type: text/plain\\n\\nplain\\n";\n}, 0644);
write_file($conf, <<"CONF");
Alias /reg $site
Alias /pre $site
ScriptAlias /cgi-bin/ $site/
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
</Location>
<Location /pre>
    SetHandler perl-script
    PerlResponseHandler ModPerl::RegistryPrefork
</Location>
CONF
($out, $code) = perennial('doctor', '--json', '-c', $conf);
$report = JSON::PP->new->decode($out);
%by     = map { ($_->{script} =~ m{([^/]+)\z})[0] => $_ } @{$report->{scripts}};
is $modes->('uses.pl'),
    'registry unsafe /reg/uses.pl, registry safe /pre/uses.pl, cgi safe /cgi-bin/uses.pl',
    'require "./lib.pl": unsafe where the handler does not chdir, safe where it does';
my ($relative) = grep { $_->{kind} eq 'relative-require' } @{$by{'uses.pl'}{findings}};
is "$relative->{name} line $relative->{line}", './lib.pl line 1', 'the require, with its line';
is $modes->('plain.pl'),
    'registry safe /reg/plain.pl, registry safe /pre/plain.pl, cgi unsafe /cgi-bin/plain.pl',
    'a script that is not executable is unsafe under CGI only';
($out, $code) = perennial('doctor', '-c', $conf, '--mode', 'cgi', $scripts);
is $code, 2, '-c and --mode together: usage';

done_testing;
