use v5.36;
use lib 't/lib';
use Test::More;
use Config;
use Cwd             qw(getcwd);
use File::Copy      qw(copy);
use File::Path      qw(make_path);
use File::Temp      qw(tempdir);
use Perennial::Test qw(http_request slurp start_program write_file serves);

# make deb builds the Debian package from a copy of this tree (tracked and new files), and the
# package is what the README says: /usr/bin/perennial, the modules with their C parts, man
# pages, /etc/perennial in Debian's Apache layout, the systemd units, Depends from
# debian-packages.txt. Unpacked into a scratch root, its own perennial serves its own
# configuration (paths moved into the scratch root) under systemd-socket-activate.

for my $tool (qw(dpkg-buildpackage dh dpkg-deb)) {
    plan
        skip_all => "$tool is not installed (make deb installs it)"
        unless grep { -x "$_/$tool" } split /:/,
        $ENV{PATH};
}
my $root = getcwd();
my $tmp  = tempdir(CLEANUP => 1);
chmod 0755, $tmp;    # Workers run as www-data when the tests run as root
my $src = "$tmp/src";
for my $file (split /\n/, `git ls-files -co --exclude-standard`) {
    next unless -f $file || -l $file;
    make_path("$src/" . ($file =~ m{\A(.*)/} ? $1 : '.'));
    if (-l $file) { symlink readlink($file), "$src/$file" or die "Can't link $file: $!" }
    else {
        copy($file, "$src/$file") or die "Can't copy $file: $!";
        chmod((stat $file)[2] & 07777, "$src/$file");
    }
}
my $out = `cd $src && make deb 2>&1`;
is $?, 0, 'make deb' or diag substr($out, -3000);
my ($deb) = glob "$src/dist/perennial_*.deb";
ok $deb, 'a .deb in dist/' or BAIL_OUT('no package built');

my $info = `dpkg-deb -f $deb Package Version Architecture Depends`;
like $info, qr/^Package: perennial$/m,        'the package';
like $info, qr/^Depends:.*\bperlapi-[\d.]+/m, 'it depends on the perl it was built for';
like $info, qr/^Depends:.*\blibhttp-parser-xs-perl\b/m,
    'and on the run scope of debian-packages.txt';
unlike $info, qr/^Depends:.*\b(?:gcc|make|perl-doc)\b/m, 'not on what only builds';
my $list = `dpkg-deb -c $deb`;
my $arch = $Config{vendorarch};

for my $path (
    './usr/bin/perennial',
    './etc/perennial/perennial.conf',
    './etc/perennial/conf.d/status.conf',
    './etc/perennial/sites-available/000-default.conf',
    './etc/perennial/sites-enabled/000-default.conf -> ../sites-available/000-default.conf',
    './lib/systemd/system/perennial.service',
    './lib/systemd/system/perennial.socket',
    './usr/share/man/man1/perennial.1.gz',
    './usr/share/man/man3/Perennial::Manual::Scripts.3pm.gz',
    './usr/share/man/man3/Perennial::Config.3pm.gz',
    ".$arch/Perennial/CLI.pm",
    ".$arch/auto/Perennial/HTTP/Core/Core.so",
    )
{
    like $list, qr/ \Q$path\E$/m, "has $path";
}
like `dpkg-deb -I $deb conffiles`, qr{^/etc/perennial/perennial\.conf$}m,
    'the configuration is a conffile: an upgrade keeps the admin\'s changes';

# Unpacked, with its paths moved into the scratch root
my $sys = "$tmp/root";
system('dpkg-deb', '-x', $deb, $sys) == 0 or BAIL_OUT('dpkg-deb -x failed');
make_path("$tmp/log", "$tmp/run", "$tmp/www", {mode => 0755});
write_file("$tmp/www/index.html", "the default site\n");
for my $file ("$sys/etc/perennial/perennial.conf",
    "$sys/etc/perennial/sites-available/000-default.conf")
{
    my $text = slurp($file);
    $text =~ s{/etc/perennial}{$sys/etc/perennial}g;
    $text =~ s{/var/log/perennial}{$tmp/log}g;
    $text =~ s{/run/perennial}{$tmp/run}g;
    $text =~ s{/var/www/html}{$tmp/www}g;
    write_file($file, $text);
}
my @perl = ($^X, "-I$sys$arch", "$sys/usr/bin/perennial");
is `cd $tmp && @perl --version`, "Perennial 0.1.0\n", 'its perennial runs';
like `cd $tmp && @perl configtest -c $sys/etc/perennial/perennial.conf 2>&1`, qr/Syntax OK/,
    'its configuration passes configtest';
is
    `cd $tmp && $^X -I$sys$arch -MPerennial::HTTP::Core -e 'print Perennial::HTTP::Core::implementation()'`,
    'C', 'with the hot path\'s C parts it was built with';

SKIP: {
    my ($activate) = grep {-x} map {"$_/systemd-socket-activate"} split /:/, $ENV{PATH};
    skip 'systemd-socket-activate is not installed', 3 unless $activate;
    my ($pid, $port) = start_program(
        sub ($port) {
            (   $activate, '-l', "127.0.0.1:$port", '-E', 'PATH', @perl, 'serve', '-c',
                "$sys/etc/perennial/perennial.conf"
            );
        },
        sub ($port) { serves($port) },
        "$tmp/activate.out"
    );
    ok $pid, 'the packaged configuration serves, on the socket systemd passes';
    is http_request($port, 'GET', 'localhost', '/')->{body}, "the default site\n",
        'the default site from sites-enabled/';
    like http_request($port, 'GET', 'localhost', '/server-status?auto')->{body},
        qr/^BusyWorkers: \d+$/m, 'and conf.d/status.conf';
    kill 'TERM', $pid;
    waitpid $pid, 0;
}

done_testing;
