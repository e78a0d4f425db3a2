use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Config;
use Perennial::Test qw(perennial scratch_dir write_file);

# Include FILE (as Apache's) and --set 'DIRECTIVE VALUE' (perennial bench's way in)
my $dir = scratch_dir();

subtest
    'Include reads another file in place, relative to ServerRoot (the file\'s directory by default)'
    => sub {
    mkdir "$dir/conf.d";
    write_file("$dir/conf.d/pool.conf", "MaxClients 7\nStartServers 3\n");
    my $main
        = write_file("$dir/main.conf", "MaxClients 2\nInclude conf.d/pool.conf\nStartServers 1\n");
    my $config = Perennial::Config->load(file => $main);
    is $config->max_clients,   7, 'the included file\'s setting, after the line before it';
    is $config->start_servers, 1, 'and a later line wins over it';
    };

subtest 'Include errors name the file and line' => sub {
    my $main = write_file("$dir/bad.conf", "KeepAlive On\nInclude nowhere.conf\n");
    my ($out, $code) = perennial('configtest', '-c', $main);
    is $code, 1, 'configtest fails';
    like $out, qr/bad\.conf line 2: Include: file '\Q$dir\E\/nowhere\.conf' not found/,
        'missing file';
    write_file("$dir/loop.conf", "Include loop.conf\n");
    ($out, $code) = perennial('configtest', '-c', "$dir/loop.conf");
    like $out, qr/Include nested more than 8 deep/, 'a file that includes itself';
    write_file("$dir/inner.conf", "Frobnicate 1\n");
    ($out, $code)
        = perennial('configtest', '-c', write_file("$dir/outer.conf", "Include inner.conf\n"));
    like $out, qr/inner\.conf line 1: unknown directive 'Frobnicate'/,
        'errors inside name the inner file';
};

subtest '--set applies a directive after the file' => sub {
    my $main = write_file("$dir/set.conf", "MaxClients 4\nKeepAlive On\n");
    my $config
        = Perennial::Config->load(file => $main, directives => ['MaxClients=9', 'KeepAlive Off']);
    is $config->max_clients, 9, 'DIRECTIVE=VALUE';
    is $config->keep_alive,  0, "'DIRECTIVE VALUE'";
    my ($out, $code) = perennial('configtest', '-c', $main, '--set', 'MaxClients=none');
    is $code, 1, 'a bad value fails';
    like $out,
        qr/--set 'MaxClients=none' line 1: MaxClients must be a positive integer, got 'none'/,
        'and says which --set';
};

done_testing;
