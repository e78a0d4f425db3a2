use v5.36;

# Every sysopen of the process counted by path: how often PerlRun reads a script's file. (Set
# before anything that opens files compiles, so that their sysopens come here.)
my %OPENED;

BEGIN {
    *CORE::GLOBAL::sysopen = sub : prototype(*$$;$) {
        $OPENED{$_[1]}++;
        return @_ > 3
            ? CORE::sysopen($_[0], $_[1], $_[2], $_[3])
            : CORE::sysopen($_[0], $_[1], $_[2]);
    };
}
use lib 't/lib';
use Test::More;
use Time::HiRes                    ();
use Perennial::Test                qw(in_process_get resident_app scratch_dir write_script);
use Perennial::Executor::FileTimes qw(local_times unchanged);

# PerlRun compiles its script on every request, but reads its file again only when the look at
# it this request (PerlScriptCheck Always: a stat) says it changed: another inode, size,
# modification or change time; and only on a local file system whose times have a fraction of a
# second. A file that changed less than a tenth of a second before its text was read is read
# again until its text is older than that, since the kernel's file times move a tick at a time
# and a second write in the same tick would leave the same times: such an edit, of the same
# size and with its modification time put back, is seen all the same (the rules themselves are
# checked first, on looks made up for them). In process: the executor's PSGI application,
# called as the server calls it.

subtest 'the rules' => sub {
    my %look = (ino => 7, size => 10, mtime => 1000.25, ctime => 2000.5);
    my $text = {%look, text_at => 2001};
    ok unchanged($text,  {%look}), 'the same look, the text read a second after the change';
    ok !unchanged($text, {%look, ino   => 8}),       'another inode';
    ok !unchanged($text, {%look, size  => 11}),      'another size';
    ok !unchanged($text, {%look, mtime => 1000.5}),  'another modification time';
    ok !unchanged($text, {%look, ctime => 2000.75}), 'another change time';
    ok !unchanged({%$text, text_at => 2000.55}, {%look}),
        'a text read within a tenth of a second of the change';
    my %whole = (%look, ctime => 2000);
    ok !unchanged({%whole, text_at => 2010}, {%whole}), 'times in whole seconds';
    ok !unchanged({%$text, ctime => undef}, {%look}),   'no change time kept with the text';
    ok !local_times('/proc/self/status'),               'not a local file system: /proc';
    ok !local_times('/dev/null'),                       'nor /dev';
};

my $dir  = scratch_dir();
my $app  = resident_app(perlrun => $dir);
my $file = "$dir/read.pl";
my $when = time - 100;
my $head = "print qq{Content-Type: text/plain\\n\\n};\n";

sub get ($name) {
    my $res = in_process_get($app, '/perlrun', $name);
    return join '', $res->[0], ' ', @{$res->[2] // []};
}

write_script($file, $head . "print 'one';\n", $when);
Time::HiRes::sleep(0.3);    # Older than a tick's doubt: its text can be trusted once read
my $trusted = local_times($file) && (Time::HiRes::stat($file))[10] =~ /\./;
note $trusted ? 'a local file system with times to the tick' : 'times that are not trusted here';
is get('read.pl'), '200 one', 'the first request';
is $OPENED{$file}, 1,         'read once';
is get('read.pl'), '200 one', 'a second request';
is get('read.pl'), '200 one', 'a third';
is $OPENED{$file}, $trusted ? 1 : 3,
    $trusted ? 'compiled again from the same text, not read again' : 'read each time';

# Two edits of the same size with the same modification time, one just after the other
write_script($file, $head . "print 'two';\n", $when);
is get('read.pl'), '200 two', 'an edit of the same size with the same time is seen';
write_script($file, $head . "print 'six';\n", $when);
is get('read.pl'), '200 six', 'and one straight after it, in the same tick of the clock';
cmp_ok $OPENED{$file}, '>=', 3, 'each read';

Time::HiRes::sleep(0.3);
my $before = $OPENED{$file};
is get('read.pl'), '200 six', 'once the text is older than the doubt';
is get('read.pl'), '200 six', 'and again';
cmp_ok $OPENED{$file}, '<=', $before + ($trusted ? 1 : 2), 'read no more than it must be';

done_testing;
