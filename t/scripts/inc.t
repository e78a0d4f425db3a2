use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(scratch_dir start_server write_script);

# What scripts load through %INC: a file that is not a module belongs to the script that
# required it (the pitfalls list's P15), and a library that changes on disk recompiles the
# Registry scripts that loaded it (P16)

my $dir = scratch_dir();
my $put = sub ($file, $text, $age = 0) { write_script("$dir/$file", $text, time + $age) };
my $script
    = sub ($body) {"#!/usr/bin/perl\n$body\nprint \"Content-Type: text/plain\\n\\n\", main();\n"};

$put->('a/lib.pl',        qq{sub greeting { "from a" }\n1;\n});
$put->('b/lib.pl',        qq{sub greeting { "from b" }\n1;\n});
$put->('a/say.pl',        $script->(qq{require "./lib.pl";\nsub main { greeting() . "\\n" }}));
$put->('b/say.pl',        $script->(qq{require "./lib.pl";\nsub main { greeting() . "\\n" }}));
$put->('a/count.pl',      qq{my \$n = 0;\nsub up { ++\$n }\n1;\n});
$put->('a/one.pl',        $script->(qq{require "./count.pl";\nsub main { "one " . up() . "\\n" }}));
$put->('a/two.pl',        $script->(qq{require "./count.pl";\nsub main { "two " . up() . "\\n" }}));
$put->('c/lib/My/Lib.pm', qq{package My::Lib;\nuse warnings;\nsub version { "lib v1" }\n1;\n});
$put->('c/part.pl',       qq{sub part { "part v1" }\n1;\n});
$put->('d/part.pl',       qq{sub part { "part v1" }\n1;\n});
$put->('d/uses.pl',       $script->(qq{require "./part.pl";\nsub main { part() . "\\n" }}));
$put->(
    'c/uses.pl',
    $script->(
              qq{use FindBin ();\nuse lib "\$FindBin::Bin/lib";\nuse My::Lib;\n}
            . qq{require "./part.pl";\nsub main { My::Lib::version() . ", " . part() . "\\n" }}
    )
);

for my $site (['e', 'blue'], ['f', 'grey']) {    # A library of data with no package line
    my ($sub, $colour) = @$site;
    $put->("$sub/lib/table.pm", qq{%Colour = (sky => '$colour');\n1;\n});
    $put->(
        "$sub/show.pl",
        $script->(
                  qq{use FindBin ();\nBEGIN { push \@INC, "\$FindBin::Bin/lib" }\n}
                . qq{require "table.pm";\nsub main { "sky is \$Colour{sky}\\n" }}
        )
    );
}

my $srv = start_server(workers => 1, conf => <<"CONF");
Alias /run $dir
<Location /run>
    SetHandler perl-script
    PerlResponseHandler ModPerl::PerlRun
    Options +ExecCGI
</Location>
Alias /reg $dir
Alias /never $dir
<Location /reg>
    SetHandler perl-script
    PerlResponseHandler ModPerl::RegistryPrefork
    Options +ExecCGI
</Location>
<Location /never>
    SetHandler perl-script
    PerlResponseHandler ModPerl::RegistryPrefork
    Options +ExecCGI
    PerlScriptCheck Never
</Location>
CONF
my $get = sub ($path) { $srv->get($path)->{content} };

subtest 'two scripts each require "./lib.pl" from their own directory' => sub {
    is_deeply [map { ($get->('/reg/a/say.pl'), $get->('/reg/b/say.pl')) } 1 .. 2],
        [("from a\n", "from b\n") x 2], 'each gets its own, on every request';
    unlike $srv->error_log, qr/Undefined subroutine/, 'nothing missing';
};

subtest 'two scripts in one directory share a file name, not its copy' => sub {
    is_deeply [map { ($get->('/reg/a/one.pl'), $get->('/reg/a/two.pl')) } 1 .. 2],
        ["one 1\n", "two 1\n", "one 2\n", "two 2\n"],
        'each keeps its own counter across requests, as its own globals';
};

subtest 'a .pm with no package line is the library of each script that requires it' => sub {
    is_deeply [map { $get->('/run/e/show.pl') } 1 .. 2], [("sky is blue\n") x 2],
        'PerlRun loads it again with each fresh package';
    is_deeply [map { ($get->('/reg/e/show.pl'), $get->('/reg/f/show.pl')) } 1 .. 2],
        [("sky is blue\n", "sky is grey\n") x 2],
        'a Registry script after it gets its own, and so does one from another directory';
};

subtest 'a changed library compiles the scripts that use it again' => sub {
    is $get->('/reg/c/uses.pl'),   "lib v1, part v1\n", 'first version';
    is $get->('/never/d/uses.pl'), "part v1\n",         'first version, never checked';
    $put->(
        'c/lib/My/Lib.pm', qq{package My::Lib;\nuse warnings;\nsub version { "lib v2" }\n1;\n}, 10
    );
    is $get->('/reg/c/uses.pl'), "lib v2, part v1\n", 'the changed module is loaded again';
    $put->('c/part.pl', qq{sub part { "part v2" }\n1;\n}, 20);
    $put->('d/part.pl', qq{sub part { "part v2" }\n1;\n}, 20);
    is $get->('/reg/c/uses.pl'),   "lib v2, part v2\n", 'and so is a required file';
    is $get->('/reg/c/uses.pl'),   "lib v2, part v2\n", 'once';
    is $get->('/never/d/uses.pl'), "part v1\n",         'PerlScriptCheck Never looks at nothing';
    my $log = $srv->error_log;
    like $log,   qr{uses\.pl: compiling again, changed: My/Lib\.pm},  'the reason is logged';
    like $log,   qr{uses\.pl: compiling again, changed: \./part\.pl}, 'for each change';
    unlike $log, qr/redefined/,             'without "redefined" warnings';
    unlike $log, qr{d/uses\.pl: compiling}, 'nothing for the script never checked';
};

subtest 'PerlRun: each compile runs with the @INC its own BEGIN made' => sub {
    my $which = "$dir/g/which.txt";
    $put->(
        'g/inc.pl',
        $script->(
            qq{BEGIN { open my \$fh, '<', '$which' or die; unshift \@INC, "/nowhere/" . <\$fh> }\n}
                . qq{sub main { join(",", grep { m{^/nowhere/} } \@INC) . "\\n" }}
        )
    );

    # The list a compile left is kept and used again when the next compile leaves the same
    my @got = map { $put->('g/which.txt', $_); $get->('/run/g/inc.pl') } qw(a a b a);
    is_deeply \@got, ["/nowhere/a\n", "/nowhere/a\n", "/nowhere/b\n", "/nowhere/a\n"],
        'the same list again, then another, then the first';
};

$srv->stop;
done_testing;
