use v5.36;
use FindBin;
use lib "$FindBin::RealBin/lib";
use Perennial::Bench::Servers qw(start_server stop_server);
my $t   = time;
my $srv = start_server(
    'apache',
    workers => 1,
    single  => 1,
    scripts => "/work/main/examples/cgi-bin",
    probe   => '/registry/hello.pl',
    timeout => 60,
    prefix  => ['valgrind', '--tool=callgrind', "--callgrind-out-file=$ENV{OUTF}"]
);
say "started after ", time - $t, " s on port $srv->{port}";
stop_server($srv);
