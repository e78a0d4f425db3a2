package Perennial::Test;
use v5.36;
use Cwd            qw(abs_path);
use Exporter       qw(import);
use Fcntl          qw(F_GETFD F_SETFD FD_CLOEXEC);
use File::Basename qw(dirname);
use File::Path     ();
use File::Temp     qw(tempdir);
use HTTP::Tiny;
use IO::Socket::IP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes ();
use Perennial::Scoreboard;

# Real servers for tests: the test binds 127.0.0.1 port 0 itself and hands the socket to
# bin/perennial as fd:N, so there is no race for a free port.

our @EXPORT_OK
    = qw(configtest write_script files_and_app http_request in_process_get load_start load_stop
    nginx_conf perennial raw_request resident_app scratch_dir script_location script_modes serves slurp
    start_program start_server start_status_server stats_during wait_until write_file);

my $ROOT = abs_path(dirname(__FILE__) . '/../../..');
my @STARTED;
my $OWNER = $$;    # The test process: a fork of it that exits does not stop its servers

# A test stopped by a signal (a timeout, Ctrl-C) still stops the servers it started: END runs
for my $sig (qw(INT TERM HUP)) {
    $SIG{$sig} //= sub (@) { exit 128 };
}

# A temporary directory the workers can read: started as root, they run as www-data
sub scratch_dir () {
    my $dir = tempdir(CLEANUP => 1);
    chmod 0755, $dir or die "Can't chmod $dir: $!";
    return $dir;
}

# bin/perennial serving $args{conf} (and $args{app}), with its pid file, logs and scoreboard
# in a scratch directory; log_on_stderr: no ErrorLog, as a site without one, the server's
# stderr going to the same error.log; access_log => 0: no CustomLog, as a site without one;
# listen: a listening socket of the test's own to serve (the test's copy is closed)
sub start_server (%args) {
    my $dir    = scratch_dir();
    my $listen = $args{listen} // IO::Socket::IP->new(
        LocalHost => '127.0.0.1',
        LocalPort => 0,
        Listen    => 128,
        ReuseAddr => 1
    ) or die "Can't listen: $@";
    my $conf = "$dir/perennial.conf";
    open(my $fh, '>', $conf) or die "Can't write $conf: $!";
    print {$fh} "PidFile $dir/perennial.pid\n",
        ($args{log_on_stderr} ? () : "ErrorLog $dir/error.log\n"),
        (($args{access_log} // 1) ? "CustomLog $dir/access.log\n" : ()), "LogLevel info\n";
    print {$fh} $args{conf} // '';
    close $fh;
    my $app = $args{app} && "$ROOT/t/psgi/$args{app}";

    # A site's own configuration file: its pid file, scoreboard and error log go here instead
    if ($args{config}) {
        $conf = $args{config};
        push @{$args{args}}, '--pid', "$dir/perennial.pid", '--error-log', "$dir/error.log";
    }
    my @cmd = (
        $^X,                                                           "-I$ROOT/lib",
        "$ROOT/bin/perennial",                                         'serve',
        '-c',                                                          $conf,
        '--listen',                                                    'fd:' . fileno($listen),
        (defined $args{workers} ? ('--workers', $args{workers}) : ()), @{$args{args} // []},
        ($app ? ($app) : ())
    );
    my $pid = fork // die "Can't fork: $!";

    if (!$pid) {
        setpgrp(0, 0);
        fcntl($listen, F_SETFD, fcntl($listen, F_GETFD, 0) & ~FD_CLOEXEC);

        # No ErrorLog: the server logs to its stderr, which is the same file here
        open(STDERR, '>>', "$dir/error.log")
            or die "Can't write $dir/error.log: $!"
            if $args{log_on_stderr};

        # A configuration that names its port through the environment (Listen ${PORT})
        $ENV{$args{port_env}} = $listen->sockport if $args{port_env};
        exec @cmd or die "Can't exec: $!";
    }
    push @STARTED, $pid;
    my $self = bless {
        pid      => $pid,
        dir      => $dir,
        port     => $listen->sockport,
        listen   => $listen,
        pid_file => "$dir/perennial.pid",
        conf     => $conf
        },
        __PACKAGE__;
    close $listen;
    wait_until(sub { -s "$dir/perennial.pid.scoreboard" || !$self->alive },
        10, 'scoreboard created');
    $self->{board} = Perennial::Scoreboard->attach("$dir/perennial.pid.scoreboard") if $self->alive;

    # Ready when a worker is in the scoreboard: a test that reads the first slot finds one
    wait_until(sub { !$self->alive || $self->slots }, 10, 'a worker started') if $self->{board};
    return $self;
}

# A DocumentRoot of files (name => content) the workers can read, and t/psgi/$app (or $app, a
# full path) mounted at /app: the configuration lines that serve them
sub files_and_app ($files, $app) {
    my $dir = scratch_dir();
    $app = "$ROOT/t/psgi/$app" unless $app =~ m{\A/};
    write_file("$dir/docs/$_", $files->{$_}) for keys %$files;
    system("chmod -R a+rX $dir") == 0 or die "Can't chmod $dir";
    return <<"CONF";
DocumentRoot $dir/docs
<Directory $dir/docs>
    Require all granted
</Directory>
<Location /app>
    SetHandler psgi
    PSGIApp $app
</Location>
CONF
}

# A fixed pool of $workers serving pid.psgi, with /server-status, once every worker is idle
sub start_status_server ($workers, %args) {
    my $srv = start_server(app => 'pid.psgi', %args, conf => <<"CONF" . ($args{conf} // ''));
StartServers $workers
MinSpareServers 1
MaxSpareServers $workers
MaxClients $workers
<Location /server-status>
    SetHandler server-status
</Location>
CONF
    wait_until(sub { $srv->idle == $workers }, 10, "$workers idle workers");
    return $srv;
}

# A program that binds a port it is told (a monitoring exporter, chromedriver): a free port is
# taken, handed over, and tried up to three times, as another process may take it in between.
# $command->($port) gives the command line, $ready->($port) says it answers. Its output goes
# to $log. Returns its pid and port; it is stopped when the test ends.
sub start_program ($command, $ready, $log) {
    for (1 .. 3) {
        my $probe = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)
            or die "Can't listen: $@";
        my $port = $probe->sockport;
        close $probe;
        my @cmd = $command->($port);
        my $pid = fork // die "Can't fork: $!";
        if (!$pid) {
            setpgrp(0, 0);
            open(STDOUT, '>',  $log)     or die "Can't write $log: $!";
            open(STDERR, '>&', \*STDOUT) or die "Can't write $log: $!";
            exec @cmd or POSIX::_exit(127);
        }
        push @STARTED, $pid;
        return ($pid, $port) if wait_until(sub { $ready->($port) }, 10, "$cmd[0] answers");
        kill 'TERM', $pid;
        waitpid $pid, 0;
    }
    return;
}

# bin/perennial with these arguments, run to its end; its output (both streams) and exit code
sub perennial (@args) {
    my $out = qx{$^X -I$ROOT/lib $ROOT/bin/perennial @args 2>&1};
    return ($out, $? >> 8);
}

# configtest on a configuration text; returns its output and exit code
sub configtest ($text, $name = 'test.conf') {
    return perennial('configtest', '-c', write_file(tempdir(CLEANUP => 1) . "/$name", $text));
}

sub alive ($self) {
    return 0 if $self->{exited};
    my $r = waitpid $self->{pid}, WNOHANG;
    if ($r == $self->{pid}) { $self->{exited} = 1; $self->{status} = $?; return 0 }
    return 1;
}

sub access_log ($self) { slurp("$self->{dir}/access.log") }

sub cli ($self, @args) { perennial(@args) }

sub conf ($self) { $self->{conf} }

# A raw client socket to the server
sub connect ($self) {
    return IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $self->{port})
        // die "Can't connect to 127.0.0.1:$self->{port}: $@";
}
sub dir       ($self) { $self->{dir} }
sub error_log ($self) { slurp("$self->{dir}/error.log") }

sub get ($self, $path = '/', %opt) {
    my $ua
        = HTTP::Tiny->new(timeout => 20, keep_alive => 0, max_redirect => $opt{max_redirect} // 5);
    return $ua->get("http://127.0.0.1:$self->{port}$path", {headers => $opt{headers} // {}});
}

sub idle ($self) { $self->scoreboard =~ tr/_// }

sub pid ($self) { $self->{pid} }

# The pids of the workers in the scoreboard
sub pids ($self) {
    map { $_->{pid} } $self->slots;
}
sub pid_file ($self) { $self->{pid_file} }
sub port     ($self) { $self->{port} }

# The state letters of every slot in use, e.g. "__W_"
sub scoreboard ($self) {
    my $board = $self->{board} or return '';
    return join '',
        map { my $s = $board->slot($_); $s->{state} eq '.' ? () : $s->{state} }
        0 .. $board->slots - 1;
}

sub signal ($self, $name) { kill $name, $self->{pid} }

sub slots ($self) {
    my $board = $self->{board};
    return grep { $_->{state} ne '.' } map { $board->slot($_) } 0 .. $board->slots - 1;
}

# The status code the server answers a GET of $path with, over a raw connection
sub status_of ($self, $path) {
    my $out
        = raw_request($self->{port}, "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return $out =~ m{\AHTTP/1\.[01] (\d+)} ? $1 : 'none';
}

sub stop ($self) {
    return $self->{status} unless $self->alive;
    kill 'TERM', $self->{pid};
    wait_until(sub { !$self->alive }, 15, 'server stopped');
    return $self->{status};
}

sub wait_exit ($self, $seconds = 15) {
    wait_until(sub { !$self->alive }, $seconds, 'server exited');
    return $self->{status};
}

# Waits until $n workers are idle and none of them is one of the pids in @$old
sub wait_replaced ($self, $old, $n) {
    my %old = map { $_ => 1 } @$old;
    return wait_until(
        sub {
            $self->idle == $n && !grep { $old{$_} } $self->pids;
        },
        10,
        "$n workers, none of @$old"
    );
}

sub workers ($self) { scalar $self->slots }

# Perennial's version, as the server reports it
sub version () { require Perennial; return $Perennial::VERSION }

# Continuous load: $n client processes send GET $path one after another, each on a new
# connection (or keep-alive, as HTTP::Tiny retries an idempotent request once when the server
# closed the idle connection), until load_stop or at most $seconds and $max requests each
sub load_start ($port, %opt) {
    my $dir = tempdir(CLEANUP => 1);
    my @pids;
    for my $i (1 .. $opt{clients} // 4) {
        my $pid = fork // die "Can't fork: $!";
        if (!$pid) {
            my $ua = Perennial::Test::Counted->new(
                timeout    => 20,
                keep_alive => $opt{keep_alive} ? 1 : 0
            );
            my ($ok, $failed, $stop, @why) = (0, 0, 0);
            local $SIG{TERM} = sub { $stop = 1 };
            my $until = Time::HiRes::time() + ($opt{seconds} // 30);
            while (!$stop && Time::HiRes::time() < $until && $ok + $failed < ($opt{max} // 20_000))
            {
                my $tries = $Perennial::Test::Counted::TRIES;
                my $res   = $ua->get("http://127.0.0.1:$port" . ($opt{path} // '/'));
                if ($Perennial::Test::Counted::TRIES - $tries > 1) {    # Its hidden retry
                    $failed++;
                    push @why, 'a kept-alive connection closed under a request (retried)';
                }
                elsif ($res->{status} == 200) { $ok++ }
                else { $failed++; push @why, "$res->{status} $res->{content}" =~ s/\s+\z//r }
            }
            open(my $fh, '>', "$dir/$i") or POSIX::_exit(1);
            print {$fh} join("\n", $ok, $failed, @why[0 .. ($#why > 4 ? 4 : $#why)]), "\n";
            close $fh;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    return {dir => $dir, pids => \@pids};
}

# Stops the clients; returns {ok => N, failed => N, why => [first failures]}
sub load_stop ($load) {
    kill 'TERM', @{$load->{pids}};
    waitpid $_, 0 for @{$load->{pids}};
    my %sum = (ok => 0, failed => 0, why => []);
    for my $i (1 .. @{$load->{pids}}) {
        my ($ok, $failed, @why) = split /\n/, slurp("$load->{dir}/$i");
        $sum{ok}     += $ok     // 0;
        $sum{failed} += $failed // 1;
        push @{$sum{why}}, @why;
    }
    return \%sum;
}

sub raw_request ($port, $bytes, %opt) {
    my $sock = IO::Socket::IP->new(
        PeerHost => $opt{to} // '127.0.0.1',
        PeerPort => $port,
        Timeout  => 5,
        ($opt{from} ? (LocalHost => $opt{from}) : ())
    ) or die "Can't connect: $@";
    $sock->syswrite($bytes) if length $bytes;
    shutdown($sock, 1)      if $opt{half_close};
    my $out      = '';
    my $deadline = Time::HiRes::time() + ($opt{timeout} // 10);
    while (Time::HiRes::time() < $deadline) {
        my $rin = '';
        vec($rin, fileno $sock, 1) = 1;
        select(my $rout = $rin, undef, undef, 0.2) or next;
        my $n = sysread $sock, $out, 65536, length $out;
        last unless $n;
        last if $opt{until} && $out =~ $opt{until};
    }
    return $out;
}

# One request as raw bytes, answered as {status, headers (lower-case names), body}, the body
# with chunked framing undone. %opt: headers, from (a source address), http10, body (sent with
# its Content-Length).
sub http_request ($port, $method, $host, $path, %opt) {
    my %fields = (
        %{$opt{headers} // {}},
        defined $opt{body} ? ('Content-Length' => length $opt{body}) : ()
    );
    my $head    = join '', map {"$_: $fields{$_}\r\n"} sort keys %fields;
    my $version = $opt{http10} ? '1.0' : '1.1';
    my $out     = raw_request(
        $port,
        "$method $path HTTP/$version\r\n"
            . (defined $host ? "Host: $host\r\n" : '')
            . "${head}Connection: close\r\n\r\n"
            . ($opt{body} // ''),
        ($opt{from} ? (from => $opt{from}) : ()),
        ($opt{to}   ? (to   => $opt{to})   : ())
    );
    my ($top, $body) = split /\r\n\r\n/, $out, 2;
    my ($status) = ($top // '') =~ m{\AHTTP/1\.[01] (\d+)};
    my %h = map { /\A([^:]+):\s*(.*)\z/ ? (lc $1 => $2) : () } split /\r\n/, $top // '';
    $body //= '';

    if (($h{'transfer-encoding'} // '') eq 'chunked') {
        my $plain = '';
        while ($body =~ s/\A([0-9a-f]+)\r\n//i && hex $1) {
            $plain .= substr $body, 0, hex $1, '';
            $body =~ s/\A\r\n//;
        }
        $body = $plain;
    }
    return {status => $status // 'none', headers => \%h, body => $body, raw => $out};
}

# HTTP::Tiny, counting the tries of each request: it asks a GET again, once, when a kept-alive
# connection turns out closed (RFC 2616's retry), which would hide the very drops the zero-loss
# tests are there to catch; the load clients count a request tried twice as failed
package Perennial::Test::Counted {    ## no critic (ProhibitMultiplePackages) the load clients' own
    use parent -norequire, 'HTTP::Tiny';
    our $TRIES = 0;

    sub _request {    ## no critic (ProhibitUnusedPrivateSubroutines) HTTP::Tiny calls it, per try
        $TRIES++;
        my $self = shift;
        return $self->SUPER::_request(@_);
    }
}

# Whether a server on this port answers a GET of $path with 200 (false while nothing listens)
sub serves ($port, $path = '/') {
    my $res = eval { http_request($port, 'GET', 'localhost', $path) };
    return $res && $res->{status} eq '200';
}

# An nginx configuration of its own in $dir (foreground, its pid, logs and temporary files
# there) around the http{} text given; returns its file
sub nginx_conf ($dir, $http) {
    return write_file("$dir/nginx.conf", <<"NGINX");
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $dir/nginx-body;
    proxy_temp_path $dir/nginx-proxy;
    fastcgi_temp_path $dir/nginx-fcgi;
    uwsgi_temp_path $dir/nginx-uwsgi;
    scgi_temp_path $dir/nginx-scgi;
$http
}
NGINX
}

# A file's content, or '' when it is not there
sub slurp ($file) {
    open(my $fh, '<', $file) or return '';
    local $/;
    return scalar <$fh>;
}

# The lines of an httpd.conf that serve a directory of scripts at a URL: a Registry or PerlRun
# handler (perl-script) or, with cgi-script, mod_cgi; $more goes inside the <Location>
sub script_location ($url, $dir, $handler = 'ModPerl::Registry', $more = '') {
    my $how
        = $handler eq 'cgi-script'
        ? "    SetHandler cgi-script\n"
        : "    SetHandler perl-script\n    PerlResponseHandler $handler\n";
    return "Alias $url $dir\n<Location $url>\n$how    Options +ExecCGI\n$more</Location>\n";
}

# /registry and /perlrun on one script directory, ModPerl::Registry and ModPerl::PerlRun with
# +ParseHeaders: the locations a test's Apache and Perennial both read
sub script_modes ($dir) {
    return join '',
        map { script_location("/$_->[0]", $dir, $_->[1], "    PerlOptions +ParseHeaders\n") }
        [registry => 'ModPerl::Registry'], [perlrun => 'ModPerl::PerlRun'];
}

# The stat calls (strace's %stat) a process makes while $code runs, by the name of the file
# they look at (its last part)
sub stats_during ($pid, $code) {
    my $out    = tempdir(CLEANUP => 1) . '/strace.txt';
    my $strace = open(my $err, '-|') // die "Can't fork: $!";
    if (!$strace) {
        open(STDERR, '>&', \*STDOUT) or die;
        exec 'strace', '-e', 'trace=%%stat', '-o', $out, '-p', $pid or die "strace: $!";
    }
    my $attached = <$err>;    # "Process N attached"
    $code->();
    kill 'INT', $strace;
    close $err;
    my %n;
    open(my $fh, '<', $out) or die "Can't read strace's output: $!";
    while (<$fh>) { $n{$1}++ if m{"[^"]*/([^/"]+)"} }
    return \%n;
}

# A file with this text, and the directories it needs
sub write_file ($file, $text, $mode = 0644) {
    File::Path::make_path(dirname($file));
    open(my $fh, '>', $file) or die "Can't write $file: $!";
    print {$fh} $text;
    close $fh;
    chmod $mode, $file;
    return $file;
}

# A script (mode 0755) with this text, modified at $mtime (seconds, with a fraction)
sub write_script ($file, $text, $mtime) {
    write_file($file, $text, 0755);
    Time::HiRes::utime($mtime, $mtime, $file) or die "Can't set the time of $file: $!";
    return $file;
}

# The resident executor's PSGI application for the scripts below $root, to call in process:
# Registry or PerlRun ($mode) as Perennial::Registry and Perennial::PerlRun run them (in the
# script's own directory), logging errors only
sub resident_app ($mode, $root) {
    require Perennial::Config;
    require Perennial::Executor;
    require Perennial::Log;
    return Perennial::Executor->new(
        root   => $root,
        log    => Perennial::Log->new(config => Perennial::Config->new(log_level => 'error')),
        name   => $mode eq 'registry' ? 'Perennial::Registry' : 'Perennial::PerlRun',
        policy => Perennial::Executor->policy_of($mode, 1),
    )->to_app;
}

# A GET of $base/$name (a query after a "?") through a PSGI application called in process, as
# the server calls it (a delayed response answered through the responder): the response,
# [status, headers, body]; a streamed one's body is the parts written, and a fourth element
# says 'streamed'
sub in_process_get ($app, $base, $name) {
    open(my $in, '<', \'') or die "Can't open an empty body: $!";
    my ($path, $query) = split /\?/, $name, 2;
    my %env = (
        REQUEST_METHOD    => 'GET',
        PATH_INFO         => "/$path",
        SCRIPT_NAME       => $base,
        REQUEST_URI       => "$base/$name",
        QUERY_STRING      => $query // '',
        SERVER_PROTOCOL   => 'HTTP/1.1',
        SERVER_NAME       => '127.0.0.1',
        SERVER_PORT       => 80,
        REMOTE_ADDR       => '127.0.0.1',
        HTTP_HOST         => '127.0.0.1',
        'psgi.url_scheme' => 'http',
        'psgi.input'      => $in,
    );
    my $res = $app->(\%env);
    return $res unless ref $res eq 'CODE';
    my $got;
    $res->(
        sub ($r) {
            $got = [@$r];
            return if $r->[2];
            @$got[2, 3] = ([], 'streamed');    # What is written, in its parts
            return Perennial::Test::Writer->new($got->[2]);
        }
    );
    return $got;
}

sub wait_until ($cond, $seconds, $label) {
    my $deadline = Time::HiRes::time() + $seconds;
    while (Time::HiRes::time() < $deadline) {
        return 1 if $cond->();
        select undef, undef, undef, 0.05;
    }
    return 1 if $cond->();
    fail "timed out after ${seconds}s waiting for: $label";
    return 0;
}

END {
    local $?;
    return if $$ != $OWNER;
    for my $pid (@STARTED) {
        kill 'KILL', -$pid;
        kill 'KILL', $pid;
        waitpid $pid, 0;
    }
}

# The writer in_process_get gives a streaming response
package Perennial::Test::Writer {
    sub new   ($class, $parts) { bless {parts => $parts}, $class }
    sub write ($self, $data)   { push @{$self->{parts}}, $data; return }
    sub close ($self)          {return}
}

1;
