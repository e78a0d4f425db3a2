use v5.36;
use lib 't/lib';
use Test::More;
use CGI ();
use Perennial::Executor::CGIPragmas;
use Perennial::Test qw(in_process_get resident_app scratch_dir write_script);

# CGI.pm's pragmas (use CGI qw(-nosticky ...)) stay with the script that asked for them, on
# every request under Registry and PerlRun alike, and never reach another script, nor do the
# limits a script sets as it runs ($CGI::POST_MAX, $CGI::DISABLE_UPLOADS, which CGI.pm's own
# reset leaves, and ModPerl::Registry with it, to the next script): in process,
# the executors' PSGI applications called as the server calls them. And the C question "do
# the pragma variables hold these values" answers as its Perl twin.

subtest 'same_values: C and Perl agree' => sub {
    plan skip_all => 'the C functions are not built (make xs)'
        unless defined &Perennial::Executor::CGIPragmas::xs_same_values;
    my ($a, $b, $c) = (1, undef, '');
    my @cases = (
        [[\$a, \$b, \$c], [1, undef, ''],    1, 'the same values'],
        [[\$a, \$b, \$c], [1, '', ''],       0, 'undefined is not the empty string'],
        [[\$a, \$b, \$c], [1, undef, undef], 0, 'nor the other way'],
        [[\$a, \$b, \$c], ['1', undef, ''],  1, 'a number and its string'],
        [[\$a, \$b],      [1, undef, ''],    0, 'fewer variables than values'],
        [[\$a],           [2],               0, 'another value'],
        [[],              [],                1, 'none'],

        # Integers that are only integers (CGI.pm's reset sets them so): the C compares them
        # as numbers, which must give what their strings give
        [[\(my $five    = 5)],  [5], 1, 'two integers'],
        [[\(my $six     = 5)],  [6], 0, 'two other integers'],
        [[\(my $minus   = -1)], [~0], 0, 'minus one and the largest unsigned'],
        [[\(my $largest = ~0)], [~0], 1, 'the largest unsigned twice'],
        [[\(my $zero    = 0)], [-0],   1, 'zero and minus zero, as integers'],
        [[\(my $five2   = 5)], ['05'], 0, 'an integer and another string of it'],
        [[\(my $five3   = 5)], [5.0],  1, 'an integer and the same number as a float'],
    );
    for my $case (@cases) {
        my ($refs, $values, $want, $label) = @$case;
        my $c = Perennial::Executor::CGIPragmas::xs_same_values($refs, $values) ? 1 : 0;
        my $p = Perennial::Executor::CGIPragmas::pp_same_values($refs, $values) ? 1 : 0;
        is $c, $p,    "C and Perl agree: $label";
        is $c, $want, "and are right: $label";
    }
};

my $dir = scratch_dir();
my %app = map { $_ => resident_app($_, $dir) } qw(registry perlrun);

sub get ($mode, $name) { join '', @{in_process_get($app{$mode}, "/$mode", $name)->[2] // []} }

my $show = q{print "Content-Type: text/plain\n\n", join ' ', map { $_ // 'undef' } }
    . q{$CGI::NOSTICKY, $CGI::NO_UNDEF_PARAMS, $CGI::POST_MAX, $CGI::DISABLE_UPLOADS;} . "\n";
write_script("$dir/asks.pl",  "use CGI qw(-nosticky -no_undef_params);\n$show", time - 10);
write_script("$dir/plain.pl", "use CGI;\n$show",                                time - 10);
write_script("$dir/changes.pl",
    "use CGI;\n\$CGI::POST_MAX = 1024; \$CGI::DISABLE_UPLOADS = 1; \$CGI::NOSTICKY = 1;\n$show",
    time - 10);

for my $mode (qw(registry perlrun)) {
    subtest "$mode: each script's own pragmas, request after request" => sub {
        for my $round (1 .. 3) {
            is get($mode, 'asks.pl'),  '1 1 -1 0', "the script that asks for two, round $round";
            is get($mode, 'plain.pl'), '0 0 -1 0', "then one that asks for none, round $round";
            is get($mode, 'changes.pl'), '1 0 1024 1',
                "one that sets them as it runs, round $round";
            is get($mode, 'plain.pl'), '0 0 -1 0', "and what it set did not last, round $round";
        }
    };
}

# A PerlRun text compiles again on each request, and what its compile sets is noted each time:
# the same text can set other values (here from a settings file it runs as it compiles)
subtest 'perlrun: pragmas a compile of the same text sets differently' => sub {
    my $settings = "$dir/settings.pl";
    my $set      = sub ($max) {
        open(my $fh, '>', $settings) or die "Can't write $settings: $!";
        print {$fh} "\$CGI::POST_MAX = $max;\n";
        close $fh;
    };
    $set->(1024);
    write_script("$dir/settings_user.pl", "use CGI;\nBEGIN { do '$settings' }\n$show", time - 10);
    is get(perlrun => 'settings_user.pl'), '0 0 1024 0', 'the value the settings file gives';
    is get(perlrun => 'settings_user.pl'), '0 0 1024 0', 'again';
    $set->(4096);
    is get(perlrun => 'settings_user.pl'), '0 0 4096 0', 'the settings file changed: its new value';
    is get(perlrun => 'plain.pl'),         '0 0 -1 0',   'and no other script gets it';
};

done_testing;
