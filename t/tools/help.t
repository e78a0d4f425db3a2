use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(perennial);

# perennial help TOPIC shows the manuals without perldoc; every tool answers --help with its
# own options

for my $tool (qw(bench tune doctor)) {
    for my $flag ('--help', '-h') {
        my ($out, $code) = perennial($tool, $flag);
        is $code, 0, "perennial $tool $flag: exit status 0";
        like $out, qr/\AUsage: perennial $tool .*\n.*-h, --help +this text/s,
            'its usage and options';
    }
}
my ($out, $code) = perennial('doctor', '--help');
like $out, qr/--run .*--log ERROR_LOG .*--timeout SECONDS/s, 'the doctor\'s options';

($out, $code) = perennial('--help');
is $code, 0, 'perennial --help';
like $out, qr/\AUsage: perennial \[serve\]/, 'the server\'s usage';
($out, $code) = perennial('status', '--help');
is $code, 0, 'a control command\'s --help';

($out, $code) = perennial('help');
is $code, 0, 'perennial help';
like $out, qr/Manuals \(perennial help TOPIC\):\n(?:  \w+ +.+\n){7}/, 'lists the manuals';
my %name = (
    apache     => 'Perennial::Manual::Apache',
    config     => 'Perennial::Config',
    deployment => 'Perennial::Manual::Deployment',
    scripts    => 'Perennial::Manual::Scripts',
    status     => 'Perennial::Manual::Status',
    tuning     => 'Perennial::Manual::Tuning',
    workers    => 'Perennial::Manual::WorkerLife',
);

for my $topic (sort keys %name) {
    ($out, $code) = perennial('help', $topic);
    is $code, 0, "perennial help $topic";
    like $out,   qr/\ANAME\n    \Q$name{$topic}\E - /, 'the manual, as text';
    unlike $out, qr/^=head|C<|L</m,                    'without POD markup';
}
($out, $code) = perennial('help', 'Scripts');
like $out, qr/THE PITFALLS, ONE BY ONE/, 'a topic in capitals too';
($out, $code) = perennial('help', 'nosuch');
is $code, 2, 'a topic there is no manual of';
like $out, qr/no manual named "nosuch"/, 'says so, with the list';

done_testing;
