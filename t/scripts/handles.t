use v5.36;
use Test::More;
use File::Temp ();
use lib 't/lib';
use Perennial::Test qw(in_process_get slurp);
use Perennial::Config;
use Perennial::Executor;
use Perennial::Executor::Handles;
use Perennial::Log;

# A script request's STDIN, STDOUT and STDERR get their IO without emptying perl's cache of
# class names (Perennial::Executor::Handles); STDOUT's IO is one for every request, so what a
# request changes on it (autoflush, a file it opened on it) must not reach the next.

# use_io, both twins: the IO of a glob, a glob reference or an IO, in a glob made local
for my $impl ('xs', 'pp') {
    my $use_io = \&{"Perennial::Executor::Handles::${impl}_use_io"};
SKIP: {
        skip 'the C functions are not built (make xs)', 5 unless defined &$use_io;
        my $outer = fileno STDIN;
        open(my $in, '<', \"one\ntwo\n") or die;
        {
            local *STDIN;
            $use_io->(\*STDIN, $in);
            is scalar <STDIN>, "one\n", "$impl: STDIN reads a glob reference's handle";
        }
        is fileno STDIN, $outer, "$impl: and is STDIN again after the scope";
        {
            local *STDIN;
            $use_io->(\*STDIN, *$in{IO});
            is scalar <STDIN>, "two\n", "$impl: an IO reference's";
        }
        {
            local *STDIN;
            $use_io->(\*STDIN, *$in);
            ok eof(STDIN), "$impl: a glob's";
        }
        {
            local *STDIN;
            $use_io->(\*STDIN, {});
            ok !defined fileno(STDIN), "$impl: anything else leaves it without a handle";
        }
    }
}

# tie_stdout and untie_stdout, both twins: STDOUT gets the kept IO, selected, without the
# autoflush left on it, tied to the object; untied, a file opened on it is told
{

    package Collect;
    sub TIEHANDLE ($class, $self) {$self}
    sub PRINT     ($self, @text)  { push @$self, @text; 1 }
}
for my $impl ('xs', 'pp') {
    my ($tie, $untie)
        = map { \&{"Perennial::Executor::Handles::${impl}_$_"} } qw(tie_stdout untie_stdout);
SKIP: {
        skip 'the C functions are not built (make xs)', 11 unless defined &$tie;
        open(my $kept,  '<', \'')        or die;    # Closed, as stdout_io's
        open(my $other, '>', \my $elsew) or die;
        close $kept;
        my $was = select $kept;
        $| = 1;
        select $other;
        my $out = bless [], 'Collect';
        {
            local *STDOUT;
            my $selected = $tie->(\*STDOUT, $kept, $out);
            is select(), 'main::STDOUT', "$impl: STDOUT is the selected handle again";
            is $|,       0,              "$impl: without the autoflush a request left on its IO";
            print 'through';
            is tied(*STDOUT), $out, "$impl: tied to the object";
            ok !$untie->(\*STDOUT, $kept, $out, $selected),
                "$impl: untied, with no file of its own";
            ok !tied(*STDOUT), "$impl: and no tie left";
            print 'back';
            $selected = $tie->(\*STDOUT, $kept, $out);
            {
                no warnings 'untie';
                untie *STDOUT;
            }
            open(STDOUT, '>', \my $own) or die;
            ok $untie->(\*STDOUT, $kept, $out, $selected),
                "$impl: one the script opened on it: told";
            CORE::close(*STDOUT);
        }
        select $was;
        {
            local *STDOUT;
            my $selected = $tie->(\*STDOUT, $kept, $out);
            $_ = 'junk' for tied *STDOUT;    # perl's own untie would crash on it
            ok !$untie->(\*STDOUT, $kept, $out, $selected),
                "$impl: a tie whose object a script overwrote: untied";
            ok !tied(*STDOUT), "$impl: and no tie left";
        }
        is_deeply $out, ['through'], "$impl: what it printed went to the object";
        is $elsew, 'back', "$impl: and after, the handle selected before is again";
        ok !defined fileno($kept), "$impl: and the kept IO is closed again";
    }
}

my $dir    = File::Temp::tempdir(CLEANUP => 1);
my %script = (
    'flush.pl'   => qq{\$| = 1;\nprint "Content-Type: text/plain\\n\\nflushed";\n},
    'plain.pl'   => qq{print "Content-Type: text/plain\\n\\nplain";\n},
    'selects.pl' => qq{\$| = 1;\nprint "Content-Type: text/plain\\n\\nleft";\n}
        . qq{open(our \$LOG, '>', "$dir/selected.txt") or die;\nselect \$LOG;\n},
    'outer.pl' =>
        qq{print "Content-Type: text/plain\n\nbefore ";\nmain::inner_request();\nprint "after";\n},
    'reopen.pl' =>
        qq{untie *STDOUT;\nopen(STDOUT, '>', "$dir/out.txt") or die;\nprint "to the file";\n},
    'outer_select.pl' => qq{print "Content-Type: text/plain\n\nbefore ";\n}
        . qq{open(my \$log, '>', "$dir/outer_log.txt") or die;\nmy \$was = select \$log;\n}
        . qq{main::inner_request();\nprint "to its log";\nselect \$was;\nclose \$log;\n}
        . qq{print "after";\n},
    'outer_reopen.pl' => qq{untie *STDOUT;\nopen(STDOUT, '>', "$dir/outer.txt") or die;\n}
        . qq{print "a";\nmain::inner_request();\nprint "b";\n},
    'assign.pl' => qq{open(my \$fh, '>', "$dir/assigned.txt") or die;\n*STDOUT = \$fh;\n}
        . qq{print "to the file";\n},
    'own_tie.pl' => qq{package Own;\nsub TIEHANDLE { bless [] }\nsub PRINT { 1 }\n}
        . qq{sub UNTIE { \$main::untied++; \$^W = 1 }\npackage main;\n}
        . qq{print "Content-Type: text/plain\\n\\nmine";\ntie *STDOUT, 'Own';\nprint "lost";\n},
    'dowarn.pl' => qq{BEGIN { \$^W = 1 }\n\$^W = 1;\nprint "Content-Type: text/plain\\n\\nset";\n},
    'init_warn.pl' => qq{INIT { \$^W = 1 }\nprint "Content-Type: text/plain\\n\\nW=\$^W";\n},
    'nowarn.pl'    => qq{\$^W = 0;\nprint "Content-Type: text/plain\\n\\nW=\$^W";\n},
    'tell.pl'      => qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{my \$seek = seek(STDOUT, 0, 0) ? 'yes' : 'no';\nprint "tell=", tell(STDOUT), " seek=\$seek";\n},
);
for my $name (keys %script) {
    open(my $fh, '>', "$dir/$name") or die "Can't write $name: $!";
    print {$fh} $script{$name};
    close $fh;
}
my $log = Perennial::Log->new(
    config => Perennial::Config->new(log_level => 'error', error_log => "$dir/error.log"));
my $app = Perennial::Executor->new(
    root   => $dir,
    log    => $log,
    name   => 'ModPerl::Registry',
    policy => {cache => 'mtime', flush => 0, reset_inc => 0, chdir => 0},
)->to_app;

# The response: status, whether it came whole (not streamed), and its body
sub run_script ($script) {
    my $res = in_process_get($app, '/registry', $script);
    return ($res->[0], $res->[3] ? 0 : 1, join '', @{$res->[2]});
}

# The descriptors this process has open on $file
sub open_on ($file) {
    opendir(my $fds, '/proc/self/fd') or die "Can't read /proc/self/fd: $!";
    return grep { (readlink("/proc/self/fd/$_") // '') eq $file } readdir $fds;
}

# A request run inside a script's (as an internal redirect runs): each has its own STDOUT
my $inner;
sub inner_request () { $inner = [run_script('plain.pl')] }

is_deeply [run_script('plain.pl')], [200, 1, 'plain'], 'a script that prints: one whole response';
is_deeply [run_script('tell.pl')], [200, 1, 'tell=-1 seek=no'],
    'a script that asks where STDOUT is, or seeks it: a stream, as under mod_perl (it died)';
is_deeply [run_script('outer.pl')], [200, 1, 'before after'],
    'a script that runs another request inside its own keeps its STDOUT';
is_deeply $inner,                   [200, 1, 'plain'],   'and the inner one has its own';
is_deeply [run_script('flush.pl')], [200, 0, 'flushed'], 'one that sets $|: streamed';
is_deeply [run_script('plain.pl')], [200, 1, 'plain'],
    'the next one starts without autoflush, as with a new STDOUT';
is_deeply [run_script('selects.pl')], [200, 0, 'left'],
    'a script that sets $| and leaves another handle selected: streamed';
is_deeply [run_script('plain.pl')], [200, 1, 'plain'],
    'the next one prints to STDOUT, selected again, without autoflush';
is -s "$dir/selected.txt",         0,   'and nothing of it went to the handle left selected';
is + (run_script('reopen.pl'))[0], 500, 'a script that opens STDOUT on a file itself';
ok -s "$dir/out.txt", 'writes there (and its response has no header: a 500)';
is_deeply [open_on("$dir/out.txt")], [],                'and the file is closed after its request';
is_deeply [run_script('plain.pl')],  [200, 1, 'plain'], 'the next request has its own STDOUT';

is select(), 'main::STDOUT', 'after a script that left its own handle selected, STDOUT is again';
my $kept = Perennial::Executor::Handles::stdout_io();
is_deeply [run_script('outer_select.pl')], [200, 1, 'before after'],
    'a script that selects its own handle and runs a request inside its own';
is_deeply $inner, [200, 1, 'plain'], 'the inner one prints to its own STDOUT';
is slurp("$dir/outer_log.txt"), 'to its log', 'and the outer one, after it, to its handle still';
is + (run_script('outer_reopen.pl'))[0], 500,
    'a script that reopened STDOUT on a file and runs a request inside its own';
is_deeply $inner, [200, 1, 'plain'], 'the inner one has its own STDOUT';
is slurp("$dir/outer.txt"),        'ab', 'and the outer one\'s file is not closed under it';
is + (run_script('assign.pl'))[0], 500,  'a script that assigns a handle of its own to *STDOUT';
is slurp("$dir/assigned.txt"),     'to the file', 'writes there, closed after its request';
ok !tied(*$kept), 'and the kept STDOUT is not left tied to its request';
is_deeply [run_script('plain.pl')], [200, 1, 'plain'], 'the next request prints as always';
our $untied = 0;
is_deeply [run_script('own_tie.pl')], [200, 1, 'mine'],
    'a script that ties STDOUT to a class of its own';
is $untied, 1, 'has that class\'s UNTIE called, as untie calls it';
is $^W,     0, 'and what its UNTIE set to $^W is not the worker\'s after it';
is $^W,     0, 'before a script that sets $^W';
is_deeply [run_script('dowarn.pl')], [200, 1, 'set'], 'one that sets $^W, at BEGIN and as it runs';
is $^W,                               0,   'leaves it as it was after its request';
is + (run_script('init_warn.pl'))[0], 200, 'one that sets $^W in an INIT block';
is $^W,                               0,   'and it is put back after the compile too';
{
    local $^W = 1;    # PerlSwitches -w
    is_deeply [run_script('nowarn.pl')], [200, 1, 'W=0'],
        'a worker with $^W on: a script sets it off';
    is $^W, 1, 'and the worker keeps it on after the request';
}

done_testing;
