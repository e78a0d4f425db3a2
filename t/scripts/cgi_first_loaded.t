use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(in_process_get resident_app scratch_dir write_script);

# CGI.pm not loaded before the scripts (no PerlModule CGI): the first script to load it sets
# $CGI::POST_MAX in a BEGIN block. CGI.pm sets POST_MAX and DISABLE_UPLOADS once, as it loads,
# and its reset between requests leaves them; the defaults every request starts from are still
# CGI.pm's own (-1, 0), not that first script's, which would be every later script's limit.
ok !$INC{'CGI.pm'}, 'CGI.pm is not loaded before the scripts';

my $dir  = scratch_dir();
my $show = q{print "Content-Type: text/plain\n\n", join ' ', }
    . q{map { $_ // 'undef' } $CGI::POST_MAX, $CGI::DISABLE_UPLOADS;} . "\n";
write_script("$dir/limits.pl",
    "use CGI;\nBEGIN { \$CGI::POST_MAX = 1024; \$CGI::DISABLE_UPLOADS = 1 }\n$show",
    time - 10);
write_script("$dir/plain.pl", "use CGI;\n$show", time - 10);

for my $mode (qw(registry perlrun)) {
    my $app = resident_app($mode, $dir);
    my $get = sub ($name) { join '', @{in_process_get($app, "/$mode", $name)->[2] // []} };
    is $get->('limits.pl'), '1024 1', "$mode: the script that sets them, loading CGI.pm";
    is $get->('plain.pl'),  '-1 0',   "$mode: a script after it has CGI.pm's own";
    is $get->('limits.pl'), '1024 1', "$mode: the first again, its own";
    is $get->('plain.pl'),  '-1 0',   "$mode: and the other, CGI.pm's";
}

done_testing;
