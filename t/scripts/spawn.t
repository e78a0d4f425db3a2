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
my @twins = (['Perl', \&Perennial::Executor::Spawn::pp_spawn]);
push @twins, ['C', \&Perennial::Executor::Spawn::xs_spawn]
    if defined &Perennial::Executor::Spawn::xs_spawn;

my $dir = scratch_dir();
mkdir "$dir/sub";
write_file("$dir/show.sh", <<'SH', 0755);
#!/bin/sh
read line
echo "stdin: $line"
echo "cwd: $(pwd)"
echo "args: $*"
env | LC_ALL=C sort | sed 's/^/env: /'
grep -E '^Sig(Ign|Blk):' /proc/$$/status
echo "to stderr" >&2
SH
write_file("$dir/plain.txt",       "echo ran by a shell\n", 0755);    # No #! line
write_file("$dir/unexecutable.sh", "#!/bin/sh\necho no\n",  0644);

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

for (@twins) {
    my ($which, $spawn) = @$_;
    my $cwd = getcwd();
    local $ENV{PERENNIAL_LEAK} = 'from the worker';
    local $SIG{PIPE}           = 'IGNORE';
    local $SIG{INT}            = 'IGNORE';
    my $blocked = POSIX::SigSet->new(SIGUSR1);
    POSIX::sigprocmask(SIG_BLOCK, $blocked);
    my ($pid, $errno, $status, $out, $err) = run_twin(
        $spawn, "$dir/show.sh",
        ['one', 'two words', undef],
        {PATH => '/usr/bin:/bin', GATEWAY_INTERFACE => 'CGI/1.1', EMPTY => undef}, "$dir/sub"
    );
    POSIX::sigprocmask(SIG_UNBLOCK, $blocked);
    ok $pid, "$which: started";
    is $status, 0, "$which: and ran to its end";
    like $out, qr/^stdin: a line in$/m,   "$which: its standard input is the descriptor given";
    like $out, qr/^cwd: \Q$dir\E\/sub$/m, "$which: it runs in the directory given";
    like $out, qr/^args: one two words $/m,
        "$which: its arguments follow its name, an undefined one empty";
    my @env = $out =~ /^env: (\w+)=/mg;
    is_deeply [grep { !/\A(?:PWD|SHLVL|_)\z/ } @env], [qw(EMPTY GATEWAY_INTERFACE PATH)],
        "$which: its environment is the one given and nothing of this process's";
    like $out, qr/^env: EMPTY=$/m, "$which: an undefined value is empty";
    my ($ignored) = $out =~ /^SigIgn:\s*(\w+)/m;
    my ($blocks)  = $out =~ /^SigBlk:\s*(\w+)/m;
    is hex(substr $ignored, -8) & ((1 << 12) | (1 << 1)), 0,    # Bits 13 and 2: PIPE, INT
        "$which: SIGPIPE and SIGINT are not ignored";
    like $blocks, qr/\A0+\z/, "$which: no signal is blocked, though this process blocked SIGUSR1";
    is $err,                 "to stderr\n", "$which: its standard error is the descriptor given";
    is getcwd(),             $cwd,          "$which: this process's directory is its own still";
    is $ENV{PERENNIAL_LEAK}, 'from the worker', "$which: and so is its environment";
    is $SIG{PIPE},           'IGNORE',          "$which: and its signals";

    # What cannot start: undef and why, before the call returns, and no child to wait for
    for (
        ['a file that is not there',       "$dir/missing.sh",                "$dir/sub",  ENOENT],
        ['a file without its execute bit', "$dir/unexecutable.sh",           "$dir/sub",  EACCES],
        ['a file without a #! line (no shell, as execve)', "$dir/plain.txt", "$dir/sub",  ENOEXEC],
        ['a directory that is not there',                  "$dir/show.sh",   "$dir/gone", ENOENT],
        )
    {
        my ($what, $file,  $where, $why) = @$_;
        my ($pid,  $errno, undef,  $out) = run_twin($spawn, $file, [], {PATH => '/bin'}, $where);
        ok !$pid, "$which: $what does not start";
        is $errno,               $why, "$which: $what: \$! says why (" . (local $! = $why) . ')';
        is $out,                 '',   "$which: $what: nothing ran";
        is waitpid(-1, WNOHANG), -1,   "$which: $what: no child left";
    }
}

done_testing;
