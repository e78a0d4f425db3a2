use v5.36;
use lib 't/lib';
use Test::More;
use File::Temp      qw(tempdir);
use Perennial::Test qw(scratch_dir start_server stats_during write_script);
use Perennial::Executor::Libraries;

# A Registry script compiles again when any site library it depends on changes: the modules it
# uses, what those use, the files it requires; however often it compiled again, whichever
# script loaded the module first in the worker; an edit within the second of the load, of the
# same size, is seen. One edit loads the module again once and compiles again every script that
# depends on it, and nothing else. Each library is looked at once a check (strace counts).

my $C   = $Perennial::Executor::Libraries::IMPLEMENTATION eq 'C';
my $dir = scratch_dir();
my $T   = int(time) - 100;    # Whole seconds in the past: each edit sets its own fraction
my $put
    = sub ($file, $text, $fraction = 0.25) { write_script("$dir/$file", $text, $T + $fraction) };
my $module = sub ($name, $body) {
    qq{package My::$name;\nuse strict;\n$body\n1;\n};
};
my $shared = sub ($v) {
    $module->(
        'Shared', qq{use My::Deep;\nour \$LOADS; \$LOADS++;\nsub v { "shared $v " . My::Deep::v() }}
    );
};
my $deep   = sub ($v) { $module->('Deep', qq{sub v { "deep $v" }}) };
my $script = sub ($name, $uses, $body) {
    qq{#!/usr/bin/perl\nuse lib "$dir/lib";\n$uses\nprint "Content-Type: text/plain\\n\\n";\n}
        . qq{print "$name ", $body, "\\n";\n};
};
$put->('lib/My/Shared.pm', $shared->('v1'));
$put->('lib/My/Deep.pm',   $deep->('v1'));
$put->('lib/My/Other.pm',  $module->('Other', q{sub v { "other v1" }}));
$put->(
    'cgi/a.pl', $script->('a', 'use My::Shared;', q{My::Shared::v(), " loads $My::Shared::LOADS"})
);
$put->(
    'cgi/b.pl', $script->('b', 'use My::Shared;', q{My::Shared::v(), " loads $My::Shared::LOADS"})
);
$put->('cgi/c.pl',    $script->('c', 'use My::Other;',       q{My::Other::v()}));
$put->('cgi/d.pl',    $script->('d', 'require "./conf.pl";', q{conf()}));
$put->('cgi/conf.pl', qq{sub conf { "conf 1" }\n1;\n});

my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /reg $dir/cgi
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::RegistryPrefork
    Options +ExecCGI
</Location>
Alias /hourly $dir/cgi
<Location /hourly>
    SetHandler perl-script
    PerlResponseHandler ModPerl::RegistryPrefork
    Options +ExecCGI
    PerlScriptCheck 3600
</Location>
<Location /perl-status>
    SetHandler perl-status
</Location>
CONF
my $get = sub ($path) {
    my $res = $srv->get($path);
    return $res->{success} ? $res->{content} =~ s/\n\z//r : "$res->{status} $res->{content}";
};
my $compiles = sub ($name) {
    my @n = $srv->error_log =~ m{/\Q$name\E: compiling again}g;
    return scalar @n;
};

subtest 'a module another script loaded first' => sub {
    is $get->('/reg/a.pl'), 'a shared v1 deep v1 loads 1', 'a loads My::Shared';
    is $get->('/reg/b.pl'), 'b shared v1 deep v1 loads 1', 'b finds it loaded';
    is $get->('/reg/c.pl'), 'c other v1',                  'c uses something else';

    # Same size, same whole second, a later fraction
    $put->('lib/My/Shared.pm', $shared->('v2'), 0.75);
    is $get->('/reg/b.pl'), 'b shared v2 deep v1 loads 2',
        'b, which did not load it, sees the edit';
    is $get->('/reg/a.pl'), 'a shared v2 deep v1 loads 2', 'a too, and the module loaded once';
    is $get->('/reg/c.pl'), 'c other v1',                  'c as before';
    is $compiles->('b.pl'), 1,                             'b compiled again';
    is $compiles->('a.pl'), 1,                             'a compiled again';
    is $compiles->('c.pl'), 0,                             'c did not' if $C;
    like $srv->error_log, qr{/b\.pl: compiling again, changed: My/Shared\.pm\n},
        'the reason is logged';
    like $srv->error_log,
        qr{/a\.pl: compiling again, changed: My/Shared\.pm \(loaded again already\)},
        'and that the second found it loaded again';
    unlike $srv->error_log, qr/redefined/, 'no "redefined" warnings';
};

subtest 'a module that a module uses' => sub {
    $put->('lib/My/Deep.pm', $deep->('v2'), 0.5);
    is $get->('/reg/a.pl'), 'a shared v2 deep v2 loads 3',
        'a sees it, through the module that uses it';
    is $get->('/reg/b.pl'), 'b shared v2 deep v2 loads 3', 'and b';
};

subtest 'after the script itself compiled again' => sub {
    $put->('cgi/a.pl', $script->('A', 'use My::Shared;', q{My::Shared::v()}), 0.5);
    is $get->('/reg/a.pl'), 'A shared v2 deep v2', 'the script changed';
    $put->('lib/My/Shared.pm', $shared->('v3'), 0.9);
    is $get->('/reg/a.pl'), 'A shared v3 deep v2', 'and a module edited after that is seen';
    $put->('lib/My/Shared.pm', $shared->('v4'), 0.95);
    is $get->('/reg/a.pl'), 'A shared v4 deep v2', 'and the next edit';
};

subtest 'a file the script requires, edited again and again' => sub {
    is $get->('/reg/d.pl'), 'd conf 1', 'first';
    for my $n (2 .. 4) {
        $put->('cgi/conf.pl', qq{sub conf { "conf $n" }\n1;\n}, 0.1 * $n);
        is $get->('/reg/d.pl'), "d conf $n", "edit $n";
    }
};

subtest 'perl-status lists what each script depends on' => sub {
    my $res = $srv->get("/perl-status");
    ok $res->{success}, "the page answers";
    my $row = sub ($name) {
        $res->{content} =~ m{/\Q$name\E</td>(?:<td>[^<]*</td>){5}<td>([^<]*)</td>} ? $1 : "no row";
    };
    is $row->("a.pl"), "My/Deep.pm My/Shared.pm", "a depends on My::Shared, and on what it uses";
    is $row->("c.pl"), "My/Other.pm",             "c on My::Other"                       if $C;
    is $row->("d.pl"), "./conf.pl",               "d on the file it requires as it runs" if $C;
};

subtest 'each library looked at once a check' => sub {
    my ($worker) = $srv->pids;
    is $get->('/hourly/b.pl'), 'b shared v4 deep v2 loads 5', 'compiled under /hourly';
    my $stats = stats_during($worker, sub { $get->('/reg/b.pl') for 1 .. 5 });
    is $stats->{'Shared.pm'}, 5, 'PerlScriptCheck Always: My::Shared once a request';
    is $stats->{'Deep.pm'},   5, 'and My::Deep';
    $stats = stats_during($worker, sub { $get->('/hourly/b.pl') for 1 .. 5 });
    is $stats->{'Shared.pm'} // 0, 0, 'PerlScriptCheck 3600: not again within the hour';
};

$srv->stop;
done_testing;
