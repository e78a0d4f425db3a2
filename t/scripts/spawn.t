use v5.36;
use lib 't/lib';
use Test::More;
use Cwd   qw(getcwd);
use Errno qw(EACCES ENOENT ENOEXEC);
use POSIX qw(SIG_BLOCK SIG_UNBLOCK SIGUSR1 WNOHANG);
use Perennial::Executor::Spawn;
use Perennial::Test qw(scratch_dir write_file);

# Perennial::Executor::Spawn in this process, the C and the Perl twin alike (t/scripts/modes.t,
# t/apache/cgi_output.t and others run CGI scripts through servers): the program gets its
# descriptors, directory, arguments and environment and nothing else of this process, the
# signals a worker ignores are back to their default, and a program that cannot start is
# reported before the call returns, with no child left behind
my @twins = (
    ['Perl', \&Perennial::Executor::Spawn::pp_spawn],
    [   'Perl without execve\'s number',    # perl's exec: a look at the file first
        sub (@args) {
            local $Perennial::Executor::Spawn::SYS_EXECVE;    ## no critic (ProhibitPackageVars)
            Perennial::Executor::Spawn::pp_spawn(@args);
        }
    ]
);
push @twins, ['C', \&Perennial::Executor::Spawn::xs_spawn]
    if defined &Perennial::Executor::Spawn::xs_spawn;

my $dir = scratch_dir();
mkdir "$dir/sub";

# Its signals read with the shell's own builtins: a grep of /proc/$$/status could catch dash
# with every signal blocked, as it is for a moment while it waits for a child
write_file("$dir/show.sh", <<'SH', 0755);
#!/bin/sh
read line
echo "stdin: $line"
echo "cwd: $(pwd)"
echo "args: $*"
env | LC_ALL=C sort | sed 's/^/env: /'
while read -r field rest; do
    case $field in SigIgn: | SigBlk:) echo "$field $rest" ;; esac
done < /proc/$$/status
echo "to stderr" >&2
SH
write_file("$dir/plain.txt",         "echo ran by a shell\n",                   0755);  # No #! line
write_file("$dir/unexecutable.sh",   "#!/bin/sh\necho no\n",                    0644);
write_file("$dir/no_interpreter.sh", "#!$dir/missing/sh\necho no\n",            0755);
write_file("$dir/nested.sh",         "#!$dir/plain.txt\necho ran by a shell\n", 0755)
    ;    # Its #! is no program

# The program's three descriptors: its input holds a line; its output and error are files
sub run_twin ($spawn, $file, $args, $env, $where) {
    write_file("$dir/in", "a line in\n");
    open(my $in,  '<', "$dir/in")  or die $!;
    open(my $out, '>', "$dir/out") or die $!;
    open(my $err, '>', "$dir/err") or die $!;
    my $pid    = $spawn->($file, $args, $env, $where, fileno $in, fileno $out, fileno $err);
    my $errno  = $! + 0;
    my $status = $pid ? (waitpid($pid, 0) && $?) : undef;
    return ($pid, $errno, $status, slurp("$dir/out"), slurp("$dir/err"));
}

sub slurp ($file) { open(my $fh, '<', $file) or die $!; local $/; return scalar <$fh> }

my $chars = "caf\x{e9}";
utf8::upgrade($chars);    # A string of characters: the program gets its bytes, as %ENV stores them

for (@twins) {
    my ($which, $spawn) = @$_;
    my $cwd = getcwd();
    local $ENV{PERENNIAL_LEAK} = 'from the worker';
    local $SIG{PIPE}           = 'DEFAULT';          # Apache's scripts have it ignored all the same
    local $SIG{INT}            = 'IGNORE';
    local $SIG{FPE}            = 'IGNORE';           # As perl has it from its start
    my $blocked = POSIX::SigSet->new(SIGUSR1);
    POSIX::sigprocmask(SIG_BLOCK, $blocked);
    my ($pid, $errno, $status, $out, $err) = run_twin(
        $spawn,
        "$dir/show.sh",
        ['one', 'two words', undef],
        {PATH => '/usr/bin:/bin', GATEWAY_INTERFACE => 'CGI/1.1', EMPTY => undef, CHARS => $chars},
        "$dir/sub"
    );
    POSIX::sigprocmask(SIG_UNBLOCK, $blocked);
    ok $pid, "$which: started";
    is $status, 0, "$which: and ran to its end";
    like $out, qr/^stdin: a line in$/m,   "$which: its standard input is the descriptor given";
    like $out, qr/^cwd: \Q$dir\E\/sub$/m, "$which: it runs in the directory given";
    like $out, qr/^args: one two words $/m,
        "$which: its arguments follow its name, an undefined one empty";
    my @env = $out =~ /^env: (\w+)=/mg;
    is_deeply [grep { !/\A(?:PWD|SHLVL|_)\z/ } @env], [qw(CHARS EMPTY GATEWAY_INTERFACE PATH)],
        "$which: its environment is the one given and nothing of this process's";
    like $out, qr/^env: EMPTY=$/m,        "$which: an undefined value is empty";
    like $out, qr/^env: CHARS=caf\xe9$/m, "$which: a string of characters, a byte a character";
    my ($ignored) = $out =~ /^SigIgn:\s*(\w+)/m;
    my ($blocks)  = $out =~ /^SigBlk:\s*(\w+)/m;

    # Signals 1 to 31 (glibc's posix_spawn leaves its own two, 32 and 33, ignored): as Apache's
    # CGI scripts have them, PIPE (13), INT (2) and XFSZ (25) ignored, the rest at their default
    is sprintf('%08x', hex(substr $ignored, -8) & 0x7fff_ffff), '01001002',
        "$which: PIPE, INT and XFSZ ignored, as under Apache; FPE not, though this process ignores it";
    like $blocks, qr/\A0+\z/, "$which: no signal is blocked, though this process blocked SIGUSR1";
    is $err,                 "to stderr\n", "$which: its standard error is the descriptor given";
    is getcwd(),             $cwd,          "$which: this process's directory is its own still";
    is $ENV{PERENNIAL_LEAK}, 'from the worker', "$which: and so is its environment";
    is $SIG{PIPE},           'DEFAULT',         "$which: and its signals";
    my ($own) = slurp("/proc/$$/status") =~ /^SigIgn:\s*(\w+)/m;
    is hex(substr $own, -8) & ((1 << 12) | (1 << 24)), 0,
        "$which: SIGPIPE and SIGXFSZ are this process's own again (not ignored)";

    # What cannot start: undef and why, before the call returns, and no child to wait for
    for (
        ['a file that is not there',       "$dir/missing.sh",                "$dir/sub",  ENOENT],
        ['a file without its execute bit', "$dir/unexecutable.sh",           "$dir/sub",  EACCES],
        ['a file without a #! line (no shell, as execve)', "$dir/plain.txt", "$dir/sub",  ENOEXEC],
        ['a directory that is not there',                  "$dir/show.sh",   "$dir/gone", ENOENT],
        ['a #! naming an interpreter not there',  "$dir/no_interpreter.sh",  "$dir/sub",  ENOENT],
        ['a #! naming a file that is no program', "$dir/nested.sh",          "$dir/sub",  ENOEXEC],
        )
    {
        my ($what, $file, $where, $why) = @$_;
        next if $which =~ /without/ && $file =~ /nested/;    # execvp gives it to /bin/sh

        # A worker's warning hook writes the log, which sets $! (perl's exec warns as it fails)
        local $SIG{__WARN__} = sub (@) { $! = 0 };
        my ($pid, $errno, undef, $out) = run_twin($spawn, $file, [], {PATH => '/bin'}, $where);
        ok !$pid, "$which: $what does not start";
        is $errno,               $why, "$which: $what: \$! says why (" . (local $! = $why) . ')';
        is $out,                 '',   "$which: $what: nothing ran";
        is waitpid(-1, WNOHANG), -1,   "$which: $what: no child left";
    }
}

# Descriptors given as 0, 1 or 2: each reaches the place it is given for, whatever the order of
# the copies (a copy onto 0 would otherwise overwrite an output given as 0 before it is used)
for (@twins) {
    my ($which, $spawn) = @$_;
    open(my $keep, '<&', \*STDIN) or die $!;
    close STDIN;
    no warnings 'io';    ## no critic (ProhibitNoWarnings) descriptor 0 taken for output, on purpose
    open(my $out, '>', "$dir/out0") or die $!;    # The lowest free descriptor: 0
    is fileno $out, 0, "$which: the output is given as descriptor 0";
    open(my $in,  '<', "$dir/show.sh") or die $!;
    open(my $err, '>', "$dir/err0")    or die $!;
    my $pid = $spawn->(
        '/bin/sh',
        ['-c', 'echo out; read l; echo "in: $l"; echo err >&2'],
        {PATH => '/bin'},
        $dir, fileno $in, 0, fileno $err
    );
    waitpid $pid, 0 if $pid;
    close $out;
    open(STDIN, '<&', $keep) or die $!;
    is slurp("$dir/out0"), "out\nin: #!/bin/sh\n",
        "$which: the output and the input each in its place";
    is slurp("$dir/err0"), "err\n", "$which: and the errors";
}

done_testing;
