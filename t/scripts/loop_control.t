use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(scratch_dir write_file);
use Perennial::Test::Scripts qw(pid_script_server);

# A `last`, `next` or `redo` at a resident script's top level leaves the script's code, where
# perl under mod_cgi would die with "Can't "last" outside a loop block": the executor's own
# block catches it (it must not reach a loop of the server's), the request answers as for a
# script that died there (a 500 before its head; its head and body after), the log says why,
# and the worker lives on
my $dir = scratch_dir();
for my $word (qw(last next redo)) {
    write_file("$dir/before_$word.pl", "$word;\nprint qq{Content-Type: text/plain\\n\\nno\\n};\n",
        0755);
    write_file("$dir/after_$word.pl",
        qq{print "Content-Type: text/plain\\n\\nsome\\n";\n$word;\nprint "more\\n";\n}, 0755);
}
my ($srv, $get, $pid) = pid_script_server($dir);

for my $mode (qw(registry perlrun)) {
    for my $word (qw(last next redo)) {
        is $get->("/$mode/before_$word.pl")->{status}, 500, "/$mode: $word before its head: 500";
        is_deeply [@{$get->("/$mode/after_$word.pl")}{qw(status body)}], [200, "some\n"],
            "/$mode: $word after it: its head and what it printed before, as under mod_cgi";
    }
}
is $get->('/registry/pid.pl')->{body}, $pid, 'the same worker answers after them';
my @logged = $srv->error_log =~ /Can't "last", "next" or "redo" outside a loop block/g;
is scalar @logged, 12, 'each logged with the reason';
unlike $srv->error_log, qr/exited|died \(/, 'no worker died';
$srv->stop;
done_testing;
