use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(apache_available);

# Perennial's APR::URI against mod_perl's own (libapache2-mod-perl2's, which loads outside
# Apache): the same parts and the same unparse, for each flag, of URLs of every shape
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $program = <<'PL';
my $pool = eval { APR::Pool->new };
my @urls = ('http://u:pw@h.x:8080/a/b?q=1#f', '/fields.pl/x?a=1', 'https://h:443/',
    'http://[::1]:81/p', 'mailto:x@y', '//host/p?', '', 'http://u@h/', 'ftp://:pw@h:21/x#',
    'HTTP://H:80/', '/a?b#c', 'http://h:/p', 'http://h:0/', 'wss://h:443/x', '?q', '#f',
    'http:path', 'http://h/%20?a#b#c', 'http://a:b:c@h/', 'http://[::1/', 'http://x@y@h:8/');
for my $url (@urls) {
    my $uri = APR::URI->parse($pool, $url);
    print join('|', map { $_ // 'undef' } (map { $uri->$_ } qw(scheme user password hostname port
        path query fragment hostinfo)), $uri->unparse, map { $uri->unparse($_) } 0 .. 63), "\n";
}
PL
my $file = scratch_dir() . '/parse.pl';
write_file($file, $program);
my $theirs = _output($^X, '-MAPR::Pool', '-MAPR::URI',           $file);
my $ours   = _output($^X, '-Ilib',       '-MPerennial::ModPerl', $file);
my @want   = split /\n/, $theirs;
my @got    = split /\n/, $ours;
is scalar(@got), scalar(@want), 'as many URLs parsed';
is $got[$_], $want[$_], 'URL ' . ($_ + 1) . ': its parts and its 65 unparses, as mod_perl\'s'
    for 0 .. $#want;

done_testing;

sub _output (@command) {
    open(my $out, '-|', @command) or die "Can't run $command[0]: $!";
    local $/;
    return scalar <$out>;
}
