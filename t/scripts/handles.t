use v5.36;
use Test::More;
use Config     ();
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

# open_stdout and close_stdout, both twins: STDOUT gets the kept IO, selected, without the
# autoflush left on it, writing to the output (a handle on it in C, tied to it in Perl); closed,
# a file opened on it is told
for my $impl ('xs', 'pp') {
    my ($open, $close)
        = map { \&{"Perennial::Executor::Handles::${impl}_$_"} } qw(open_stdout close_stdout);
SKIP: {
        skip 'the C functions are not built (make xs)', 13 unless defined &$open;
        open(my $kept,  '<', \'')        or die;    # Closed, as stdout_io's
        open(my $other, '>', \my $elsew) or die;
        close $kept;
        my $was = select $kept;
        $| = 1;
        select $other;
        my @sent;
        my $out
            = Perennial::Executor::Output->for_script(sub ($res) { push @sent, $res; return }, 0);
        {
            local *STDOUT;
            my $selected = $open->(\*STDOUT, $kept, $out);
            is select(), 'main::STDOUT', "$impl: STDOUT is the selected handle again";
            is $|,       0,              "$impl: without the autoflush a request left on its IO";
            print "Content-Type: text/plain\n\nthrough";
            is Perennial::Executor::Output::on_stdout(), $out, "$impl: writing to the output";
            ok !$close->(\*STDOUT, $kept, $out, $selected),
                "$impl: closed, with no file of its own";
            ok !defined Perennial::Executor::Output::on_stdout(), "$impl: and not on it any more";
            print 'back';
            my $other_out = Perennial::Executor::Output->for_script(sub { }, 0);
            $selected = $open->(\*STDOUT, $kept, $other_out);
            {
                no warnings 'untie';
                untie *STDOUT;
            }
            open(STDOUT, '>', \my $own) or die;
            ok $close->(\*STDOUT, $kept, $other_out, $selected),
                "$impl: one the script opened on it: told";
            CORE::close(*STDOUT);
        }
        select $was;
        {
            local *STDOUT;
            my $selected = $open->(\*STDOUT, $kept, $out);
            $_ = 'junk' for grep {defined} tied *STDOUT;    # perl's own untie would crash on it
            ok !$close->(\*STDOUT, $kept, $out, $selected),
                "$impl: a tie whose object a script overwrote: untied";
            ok !tied(*STDOUT), "$impl: and no tie left";
        }
        is $out->finish, undef, "$impl: the output ends";
        is_deeply \@sent, [[200, ['Content-Type', 'text/plain'], ['through']]],
            "$impl: with what was printed to it";
        is $elsew, 'back', "$impl: and after, the handle selected before is again";
        {
            no warnings 'closed';
            ok !(print({$kept} 'nowhere') && $kept->flush),
                "$impl: and the kept IO writes to no request (idle)";
            print {$kept} 'nowhere either';
        }
        my @next;
        my $next
            = Perennial::Executor::Output->for_script(sub ($res) { push @next, $res; return }, 0);
        {
            local *STDOUT;
            my $selected = $open->(\*STDOUT, $kept, $next);
            print "Content-Type: text/plain\n\nnext";
            $close->(\*STDOUT, $kept, $next, $selected);
        }
        $next->finish;
        is_deeply \@next, [[200, ['Content-Type', 'text/plain'], ['next']]],
            "$impl: what was printed to it between requests is not the next request's";
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

    # What a handle does that a tie could not (the C's STDOUT is a handle on the output)
    'dup.pl' => qq{open(my \$save, '>&STDOUT') or die "dup: \$!";\n}
        . qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{open(STDOUT, '>', "$dir/dup.txt") or die "file: \$!";\nprint "to the file";\n}
        . qq{open(STDOUT, '>&', \$save) or die "back: \$!";\nprint "back";\n},
    'kept_dup.pl' => qq{open(our \$SAVE, '>&STDOUT') or die "dup: \$!" unless \$SAVE;\n}
        . qq{print {\$SAVE} "late " if \$main::late++;\n}
        . qq{print "Content-Type: text/plain\\n\\nnow";\n},
    'format.pl' => qq{#!/usr/bin/perl -w\nour (\$name, \$n);\nformat STDOUT =\n\@<<<< \@>>>\n}
        . qq{\$name, \$n\n.\nprint "Content-Type: text/plain\\n\\n";\n}
        . qq{for (['ann', 1], ['bob', 22]) { (\$name, \$n) = \@\$_; write }\n},
    'format2.pl' => qq{#!/usr/bin/perl -w\nformat STDOUT =\nsecond\n.\n}
        . qq{print "Content-Type: text/plain\\n\\n";\nwrite;\n},
    'format_name.pl' => qq{format MINE =\nmine\n.\nprint "Content-Type: text/plain\\n\\n\$~ ";\n}
        . qq{\$~ = 'MINE';\nwrite;\n},
    'syswrite.pl' => qq{syswrite STDOUT, "Content-Type: text/plain\\n\\n";\nprint "a";\n}
        . qq{my \$n = syswrite(STDOUT, "xbcx", 2, 1);\nmy \$m = syswrite(STDOUT, "--de", 9, -2);\n}
        . qq{print "f \$n \$m";\n},
    'syswrite_capture.pl' => qq{print "Content-Type: text/plain\\n\\n";\n}
        . qq{"\\x{263a}" =~ /(.)/;\nsyswrite STDOUT, \$1;\n},
    'page_length.pl' => qq{print "Content-Type: text/plain\\n\\n\$=";\n\$= = 5;\n},
    'pop_twice.pl'   => qq{print "Content-Type: text/plain\\n\\nx";\n}
        . qq{binmode STDOUT, ':pop';\nbinmode STDOUT, ':pop';\n},
    'thread.pl' => qq{use threads;\nprint "Content-Type: text/plain\\n\\nmain ";\n}
        . qq{threads->create(sub { print "thread " })->join;\nprint "after";\n},
    'syswrite_wide.pl' =>
        qq{print "Content-Type: text/plain\\n\\n";\nsyswrite STDOUT, "\\x{263a}";\n},
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
my $handle = defined &Perennial::Executor::Handles::xs_open_stdout && !$ENV{PERENNIAL_PURE_PERL};
SKIP: {
    skip 'STDOUT is a tie without the C functions (make xs)', 22 unless $handle;
    is_deeply [run_script('tell.pl')], [200, 1, 'tell=26 seek=no'],
        'a script that asks where STDOUT is: the bytes printed, as perl counts them on '
        . "mod_cgi's pipe; it cannot seek (the tie had no tell: it died)";
    is_deeply [run_script('dup.pl')], [200, 1, 'back'],
        'a script that saves STDOUT, reopens it on a file and restores it: its response';
    is slurp("$dir/dup.txt"), 'to the file', 'and the file has what it printed between';
    is_deeply [run_script('kept_dup.pl')], [200, 1, 'now'],
        'a script that keeps a duplicate of STDOUT in a global';
    is_deeply [run_script('kept_dup.pl')], [200, 1, 'now'],
        'prints to it in a later request: nothing reaches that request';
    is_deeply [run_script('format.pl')], [200, 1, "ann      1\nbob     22\n"],
        'a script with a format STDOUT: write writes it';
    is_deeply [run_script('format2.pl')], [200, 1, "second\n"], 'another with its own';
    is_deeply [run_script('format.pl')], [200, 1, "ann      1\nbob     22\n"],
        'and the first has its own still';
    unlike slurp("$dir/error.log"), qr/redefined/, 'without a warning that one redefined the other';
    is_deeply [run_script('format_name.pl')], [200, 1, "STDOUT mine\n"],
        'a script that names its format ($~)';
    is_deeply [run_script('format_name.pl')], [200, 1, "STDOUT mine\n"],
        'finds the default name again on its next request, as on a new handle';
    is_deeply [run_script('syswrite.pl')], [200, 1, 'abcdef 2 2'],
        'syswrite to STDOUT: its bytes in their place, with its length and offset';
    is_deeply [run_script('syswrite_wide.pl')], [200, 1, ''],
        'and a wide character dies, as syswrite does (after its head: the head stands)';
    like slurp("$dir/error.log"),
        qr/Wide character in syswrite at \Q$dir\E\/syswrite_wide.pl line 2/,
        'the log says where';
    is + (run_script('syswrite_capture.pl'))[2], '',
        'and a wide character in $1 too, as perl reads the value first';
    is_deeply [map { (run_script('page_length.pl'))[2] } 1, 2], [60, 60],
        'a script that sets $= leaves the next request the default page length';
    is + (run_script('pop_twice.pl'))[0], 200, 'a script that pops every layer of STDOUT';
    open(my $later, '>', "$dir/later.txt") or die;
    is_deeply [run_script('plain.pl')], [200, 1, 'plain'], 'the next request has a STDOUT again';
    print {$later} 'mine';
    close $later;
    is slurp("$dir/later.txt"), 'mine', 'and a handle opened after it is its own';
SKIP: {
        skip 'this perl has no threads', 2
            unless $Config::Config{useithreads} && eval {
            require threads;
            1;
            };
        is_deeply [map { [run_script('thread.pl')] } 1 .. 3], [([200, 1, 'main after']) x 3],
            'a script that starts a thread: its own prints, request after request (the '
            . "thread's copy of STDOUT writes to no response)";
        is_deeply [run_script('plain.pl')], [200, 1, 'plain'], 'and the next request as always';
    }
    is_deeply [run_script('plain.pl')], [200, 1, 'plain'], 'the next request prints as always';
}
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
