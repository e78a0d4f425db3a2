use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(scratch_dir start_server write_file);

# A PSGI application mounted at a <Location> sees its mount in SCRIPT_NAME and the rest in
# PATH_INFO, in a delayed and a streaming response too (Catalyst answers with one), as
# Plack::App::URLMap gives them; and the environment is as it was once the response is done
my $dir = scratch_dir();
my $app = write_file("$dir/delayed.psgi", <<'PSGI');
sub {
    my $env = shift;
    return sub {
        my $respond = shift;
        my $seen    = "$env->{SCRIPT_NAME}|$env->{PATH_INFO}";
        return $respond->([200, ['Content-Type' => 'text/plain'], ["delayed $seen\n"]])
            unless $env->{QUERY_STRING} eq 'stream';
        my $w = $respond->([200, ['Content-Type' => 'text/plain']]);
        $w->write("streaming $seen\n");
        $w->close;
    };
}
PSGI
my $srv = start_server(workers => 1, conf => <<"CONF");
<Location /cat>
    SetHandler psgi
    PSGIApp $app
</Location>
CONF
is $srv->get('/cat/x/y')->{content},        "delayed /cat|/x/y\n",   'a delayed response';
is $srv->get('/cat/x/y?stream')->{content}, "streaming /cat|/x/y\n", 'a streaming one';
is $srv->get('/cat')->{content},            "delayed /cat|\n",       'the mount itself';
$srv->stop;
done_testing;
