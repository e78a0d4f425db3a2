use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test          qw(scratch_dir write_file);
use Perennial::Test::Scripts qw(pid_script_server);

# A resident script that dies with an exception object that cannot be made text (overloading
# with no "" and no fallback): a 500 before its head, its head and body after, the object named
# by its class in the log, and the worker lives on
my $dir   = scratch_dir();
my $class = q{package NoText { use overload 'bool' => sub {1}, fallback => 0; }} . "\n";
write_file("$dir/before.pl", "${class}die bless {}, 'NoText';\n", 0755);
write_file("$dir/after.pl",
    qq{${class}print "Content-Type: text/plain\\n\\nsome\\n";\ndie bless {}, 'NoText';\n}, 0755);
my ($srv, $get, $pid) = pid_script_server($dir);

for my $mode (qw(registry perlrun)) {
    is $get->("/$mode/before.pl")->{status}, 500, "/$mode: dying before its head: 500";
    is_deeply [@{$get->("/$mode/after.pl")}{qw(status body)}], [200, "some\n"],
        "/$mode: dying after it: its head and body, as under mod_cgi";
}
is $get->('/registry/pid.pl')->{body}, $pid, 'the same worker answers after them';
my @logged = $srv->error_log =~ /an exception object of class NoText that cannot be made text/g;
is scalar @logged, 4, 'each logged, the object named by its class';
unlike $srv->error_log, qr/exited|died \(/, 'no worker died';
$srv->stop;
done_testing;
