use v5.36;
use lib 't/lib';
use Test::More;
use Cwd        qw(abs_path);
use File::Path qw(make_path);
use HTTP::Tiny;
use JSON::PP        ();
use MIME::Base64    qw(decode_base64);
use Perennial::Test qw(start_program start_status_server wait_until);

# The server-status page in a real browser: headless Chromium, driven over WebDriver by
# chromedriver, at 1280 and 400 pixels wide. The layout is measured in the page (nothing may
# stick out of the viewport; the worker table scrolls inside its own box) and a screenshot of
# each width is saved in logs/screenshots/.
my ($chromium, $driver) = ('/usr/bin/chromium', '/usr/bin/chromedriver');
plan skip_all => 'chromium and chromium-driver are not installed (make test installs them)'
    unless -x $chromium && -x $driver;

my $shots = abs_path('.') . '/logs/screenshots';
make_path($shots);
my $srv = start_status_server(4);
$srv->get("/request/number/$_?with=a&long=query+string+to+show+how+long+lines+fit") for 1 .. 12;
my $sleeper = fork // die;
if (!$sleeper) { $srv->get('/sleep/20'); POSIX::_exit(0) }
wait_until(sub { $srv->scoreboard =~ /W/ }, 10, 'one worker busy');

my ($pid, $port) = start_program(
    sub ($port) { ($driver, "--port=$port", '--allowed-ips=127.0.0.1') },
    sub ($port) { HTTP::Tiny->new->get("http://127.0.0.1:$port/status")->{status} == 200 },
    $srv->dir . '/chromedriver.log'
);
my $base = "http://127.0.0.1:$port";
ok $pid, 'chromedriver runs' or BAIL_OUT('no chromedriver');

my $json = JSON::PP->new->canonical;
my $ua   = HTTP::Tiny->new(timeout => 60);

sub wd ($method, $path, $body = undef) {
    my $res = $ua->request($method, "$base$path",
        $body
        ? {content => $json->encode($body), headers => {'Content-Type' => 'application/json'}}
        : {});
    my $out = eval { $json->decode($res->{content}) } // {};
    die "WebDriver $method $path: $res->{status} $res->{content}\n" if $res->{status} != 200;
    return $out->{value};
}

# Measured in the page: what is wider than the viewport, and how the table fits
my $MEASURE = <<'JS';
const vw = document.documentElement.clientWidth;
const out = [];
for (const el of document.querySelectorAll('h1, h2, dl, dt, dd, pre, ul.legend, div.table, p')) {
    const r = el.getBoundingClientRect();
    if (r.right > vw + 1 || r.left < -1) out.push(el.tagName + (el.id ? '#' + el.id : '') + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
}
const box = document.querySelector('div.table');
return {
    viewport: vw,
    page: document.documentElement.scrollWidth,
    outside: out,
    rows: document.querySelectorAll('#workers tbody tr').length,
    columns: document.querySelectorAll('#workers thead th').length,
    box_scrolls: getComputedStyle(box).overflowX,
    table_wider: box.scrollWidth > box.clientWidth,
    board: document.getElementById('scoreboard').textContent.replace(/\s/g, ''),
    overlap: (() => {
        const a = document.querySelector('dl').getBoundingClientRect();
        const b = document.getElementById('scoreboard').getBoundingClientRect();
        const c = box.getBoundingClientRect();
        return a.bottom > b.top + 1 || b.bottom > c.top + 1;
    })(),
};
JS

for my $width (1280, 400) {
    subtest "at $width pixels" => sub {
        my $session = wd(
            POST => '/session',
            {   capabilities => {
                    alwaysMatch => {
                        'goog:chromeOptions' => {
                            binary => $chromium,
                            args   => [
                                '--headless=new', '--no-sandbox',
                                '--disable-gpu',  '--hide-scrollbars',
                                '--window-size=1280,900'
                            ]
                        }
                    }
                }
            }
        );
        my $id = $session->{sessionId};

        # A window cannot be narrower than 500 px: the viewport is set as a phone's would be
        wd( POST => "/session/$id/goog/cdp/execute",
            {   cmd    => 'Emulation.setDeviceMetricsOverride',
                params => {width => $width, height => 900, deviceScaleFactor => 1, mobile => \0}
            }
        );
        wd( POST => "/session/$id/url",
            {url => 'http://127.0.0.1:' . $srv->port . '/server-status'}
        );
        my $m = wd(POST => "/session/$id/execute/sync", {script => $MEASURE, args => []});
        is $m->{viewport}, $width,         "the viewport is $width px";
        is $m->{page},     $m->{viewport}, 'the page is no wider than the viewport';
        is_deeply $m->{outside}, [], 'no block sticks out of it';
        ok !$m->{overlap}, 'figures, scoreboard and table do not overlap';
        is $m->{rows},        4,      'a row per worker';
        is $m->{columns},     17,     'seventeen columns';
        is $m->{box_scrolls}, 'auto', 'the table scrolls inside its box';
        ok $m->{table_wider}, 'and at 400 px it needs to' if $width == 400;
        like $m->{board}, qr/\A[_W]{4}\.{252}\z/, 'the whole scoreboard is shown';

        # The whole page in the screenshot: the viewport made as tall as the page
        my $height = wd(
            POST => "/session/$id/execute/sync",
            {script => 'return document.documentElement.scrollHeight', args => []}
        );
        wd( POST => "/session/$id/goog/cdp/execute",
            {   cmd    => 'Emulation.setDeviceMetricsOverride',
                params => {width => $width, height => $height, deviceScaleFactor => 1, mobile => \0}
            }
        );
        my $png = decode_base64(wd(GET => "/session/$id/screenshot"));
        is substr($png, 0, 8), "\x89PNG\r\n\x1a\n", 'a PNG screenshot';
        my ($w) = unpack 'N', substr($png, 16, 4);
        is $w, $width, "as wide as the window";
        open(my $fh, '>:raw', "$shots/server-status-$width.png") or die $!;
        print {$fh} $png;
        close $fh;
        note "screenshot: logs/screenshots/server-status-$width.png";
        wd(DELETE => "/session/$id");
    };
}

waitpid $sleeper, 0 if kill 'TERM', $sleeper;
$srv->stop;
done_testing;
