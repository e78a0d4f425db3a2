package Perennial::Bench::Servers;
use v5.36;
use Exporter   qw(import);
use File::Temp qw(tempdir);
use IO::Socket::IP;
use Time::HiRes ();
use FindBin     ();
use POSIX       ();

# Starts the servers being compared, each on its own loopback port with its own files, never a
# system instance, and stops them again (the whole process group).

our @EXPORT_OK = qw(group_cpu settle spawn start_server stop_server);

my $ROOT = "$FindBin::RealBin/..";
my %RUNNING;    # pid => server: stopped at exit even when a benchmark dies half-way

END {
    my $status = $?;
    stop_server($_) for values %RUNNING;
    $? = $status;
}

my %COMMAND;
%COMMAND = (
    'perennial-scripts' => sub (%a) {
        _write("$a{dir}/perennial.conf",
                  "Listen 127.0.0.1:$a{port}\nLogLevel warn\n"
                . _keepalive(%a)
                . ($a{site}            ? ''                                 : _access_log(%a))
                . ($a{preload}         ? "PerlModule $a{preload}\n"         : '')
                . ($a{preload_scripts} ? "PerlPreloadScripts $a{scripts}\n" : '')
                . _site(\%a, _script_locations($a{scripts})));
        (   $^X, "$ROOT/bin/perennial",    'serve', '-c', "$a{dir}/perennial.conf", '--workers',
            $a{workers}, '--max-requests', 0,       map { ('--set', $_) } @{$a{set} // []}
        );
    },
    apache => sub (%a) {
        my $mods = '/usr/lib/apache2/modules';
        _write("$a{dir}/httpd.conf", _apache_head(%a) . <<"CONF");
LoadModule alias_module $mods/mod_alias.so
LoadModule cgi_module $mods/mod_cgi.so
LoadModule perl_module $mods/mod_perl.so
MaxConnectionsPerChild 0
${\ _keepalive(%a)}DocumentRoot $a{dir}
PerlModule ModPerl::Registry ModPerl::PerlRun ${\ ($a{preload} // '')}
${\ _registry_loader(%a)}<Directory $a{scripts}>
    AllowOverride None
    Require all granted
</Directory>
${\ _site(\%a, _script_locations($a{scripts}))}
CONF
        ('/usr/sbin/apache2', '-f', "$a{dir}/httpd.conf", '-DFOREGROUND', ($a{single} ? '-X' : ()));
    },

    # A PSGI application in Apache prefork, through mod_perl and Plack's own handler for it, with
    # mod_reqtimeout as Debian enables it
    'apache-psgi' => sub (%a) {
        my $mods = '/usr/lib/apache2/modules';
        _write("$a{dir}/httpd.conf", _apache_head(%a) . <<"CONF");
LoadModule perl_module $mods/mod_perl.so
LoadModule reqtimeout_module $mods/mod_reqtimeout.so
MaxConnectionsPerChild 0
${\ _keepalive(%a)}DocumentRoot $a{dir}
PerlModule Plack::Handler::Apache2
<Location />
    SetHandler perl-script
    PerlResponseHandler Plack::Handler::Apache2
    PerlSetVar psgi_app $a{app}
</Location>
CONF
        ('/usr/sbin/apache2', '-f', "$a{dir}/httpd.conf", '-DFOREGROUND');
    },

    # Static files from $a{docs}: the same directory, three servers
    'perennial-static' => sub (%a) {
        _write("$a{dir}/perennial.conf",
            "Listen 127.0.0.1:$a{port}\nLogLevel warn\nDocumentRoot $a{docs}\nKeepAlive On\n");
        (   $^X, "$ROOT/bin/perennial", 'serve', '-c', "$a{dir}/perennial.conf", '--workers',
            $a{workers}
        );
    },
    'apache-static' => sub (%a) {
        my $mods = '/usr/lib/apache2/modules';
        _write("$a{dir}/httpd.conf", _apache_head(%a) . <<"CONF");
LoadModule mime_module $mods/mod_mime.so
TypesConfig /etc/mime.types
KeepAlive On
DocumentRoot $a{docs}
<Directory $a{docs}>
    Require all granted
</Directory>
CONF
        ('/usr/sbin/apache2', '-f', "$a{dir}/httpd.conf", '-DFOREGROUND');
    },
    'nginx-static' => sub (%a) {
        _write("$a{dir}/nginx.conf", <<"CONF");
daemon off;
worker_processes $a{workers};
pid $a{dir}/nginx.pid;
error_log $a{dir}/error.log;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    sendfile on;
    client_body_temp_path $a{dir}/body;
    proxy_temp_path $a{dir}/proxy;
    fastcgi_temp_path $a{dir}/fcgi;
    uwsgi_temp_path $a{dir}/uwsgi;
    scgi_temp_path $a{dir}/scgi;
    server { listen 127.0.0.1:$a{port}; root $a{docs}; }
}
CONF
        ('/usr/sbin/nginx', '-c', "$a{dir}/nginx.conf", '-p', $a{dir});
    },
    'starman-cgibin' => sub (%a) {
        _write("$a{dir}/cgibin.psgi", <<"PSGI");
use Plack::Builder;
use Plack::App::CGIBin;
builder { mount '/cgi-bin' => Plack::App::CGIBin->new(root => '$a{scripts}')->to_app };
PSGI
        (   'starman',            '--workers',
            $a{workers},          '--listen',
            "127.0.0.1:$a{port}", '--max-requests',
            1_000_000,            '-E',
            'deployment',         '--disable-keepalive',
            "$a{dir}/cgibin.psgi"
        );
    },
    perennial => sub (%a) {
        _write("$a{dir}/perennial.conf",
            _site(\%a, "<Location />\n    SetHandler psgi\n    PSGIApp $a{app}\n</Location>\n"))
            if $a{site};
        (   $^X,
            "$ROOT/bin/perennial",
            'serve',
            ($a{site} ? ('-c', "$a{dir}/perennial.conf") : ()),
            '--workers',
            $a{workers},
            '--listen',
            "127.0.0.1:$a{port}",
            '--log-level',
            'warn',
            '--max-requests',
            0,
            ($a{keepalive} ? () : '--disable-keepalive'),
            '--keepalive-timeout',
            5,
            (map { ('--set', $_) } @{$a{set} // []}),
            ($a{access_log} && !$a{site} ? ('--set', _access_log(%a) =~ s/\n\z//r) : ()),
            ($a{site}                    ? ()                                      : $a{app})
        );
    },

    # Perennial as Apache prefork keeps connections: each worker waits on its own
    'perennial-unparked' => sub (%a) {
        $COMMAND{perennial}->(%a, set => ['ParkKeepAlive Off']);
    },
    starman => sub (%a) {
        (   'starman',            '--workers',
            $a{workers},          '--listen',
            "127.0.0.1:$a{port}", '--max-requests',
            1_000_000,            '-E',
            'deployment', ($a{keepalive} ? () : '--disable-keepalive'),
            $a{app}
        );
    },

    # Starlet: pure Perl on the same HTTP::Parser::XS; its keep-alive is off unless it is given
    # more than one request per connection
    starlet => sub (%a) {
        (   'plackup',                 '-s',
            'Starlet',                 '--host',
            '127.0.0.1',               '--port',
            $a{port},                  '--max-workers',
            $a{workers},               '--max-reqs-per-child',
            1_000_000,                 '-E',
            'deployment',              '--max-keepalive-reqs',
            ($a{keepalive} ? 100 : 1), '--keepalive-timeout',
            5,                         $a{app}
        );
    },
    uwsgi => sub (%a) {
        (   'uwsgi',
            '--plugins',
            'psgi',
            (   $a{keepalive}
                ? ('--http11-socket', "127.0.0.1:$a{port}")
                : ('--http-socket', "127.0.0.1:$a{port}", '--add-header', 'Connection: close')
            ),
            '--psgi',
            $a{app},
            '--master',
            '--processes',
            $a{workers},
            '--disable-logging',
            '--die-on-term'
        );
    },
);

sub start_server ($name, %args) {
    my $make = $COMMAND{$name} or die "Unknown server '$name'\n";
    my $port = _free_port();
    my $dir  = tempdir(CLEANUP => 1);
    chmod 0755, $dir;

    # prefix: a command to run the server under (valgrind); single: one process (Apache's -X)
    # stop_wait: how long stop_server waits after TERM before it kills (15 s); set: directives
    # for Perennial's --set ('ParkKeepAlive Off'); user: run by root, the server runs as that
    # user from the start (setpriv, which execs in place: the server is still the process
    # group's leader), in a directory of theirs (bench/pages.pl: a worker that gave up root
    # cannot read its own pagemap); access_log: Apache and Perennial keep a combined access log;
    # site: Apache and Perennial serve inside a <VirtualHost> with a DocumentRoot and access log
    my @prefix = @{$args{prefix} // []};
    if (defined $args{user} && $> == 0) {
        my (undef, undef, $uid, $gid) = getpwnam $args{user} or die "No user $args{user}\n";
        chown $uid, $gid, $dir or die "Can't give $dir to $args{user}: $!\n";
        unshift @prefix, 'setpriv', "--reuid=$uid", "--regid=$gid", '--init-groups', '--';
    }
    my @cmd      = (@prefix, $make->(%args, port => $port, dir => $dir));
    my $probe    = $args{probe} // '/';
    my $pid      = spawn("$dir/out.log", @cmd);
    my $deadline = Time::HiRes::time() + ($args{timeout} // 30);
    while (Time::HiRes::time() < $deadline) {
        my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port);
        if ($sock) {
            $sock->syswrite("GET $probe HTTP/1.0\r\n\r\n");
            local $/;
            my $out = <$sock> // '';
            return $RUNNING{$pid} = {
                name      => $name,
                pid       => $pid,
                port      => $port,
                dir       => $dir,
                stop_wait => $args{stop_wait} // 15
                }
                if $out =~ /Hello/i;
        }
        select undef, undef, undef, 0.1;
    }
    kill 'KILL', -$pid;
    die "$name did not start on port $port:\n" . `cat $dir/out.log`;
}

# A command in a process group of its own (stopped with it), its output in $log: its pid
sub spawn ($log, @cmd) {
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        setpgrp(0, 0);
        open(STDOUT, '>',  $log)     or die "Can't write $log: $!\n";
        open(STDERR, '>&', \*STDOUT) or die "Can't write $log: $!\n";
        exec @cmd or POSIX::_exit(127);
    }
    return $pid;
}

sub stop_server ($srv) {
    delete $RUNNING{$srv->{pid}};
    kill 'TERM', -$srv->{pid};
    my $deadline = Time::HiRes::time() + ($srv->{stop_wait} // 15);
    while (Time::HiRes::time() < $deadline) {
        return 1 if waitpid($srv->{pid}, 1) == $srv->{pid};
        select undef, undef, undef, 0.1;
    }
    warn "$srv->{name} did not stop within $srv->{stop_wait} s of TERM: killed\n";
    kill 'KILL', -$srv->{pid};
    waitpid $srv->{pid}, 0;
    return 0;    # Killed: what it would have said as it ended is missing
}

# Waits until a server has finished what a load left it: a load generator that stops closes
# its connections, but the requests it had sent are still in the server's queue, and the
# server answers each of them (a CGI script runs to the end for a client that is gone, under
# Apache's mod_cgi as under Perennial). Measured right after, the next server or path shares
# the machine with that backlog: after wrk -c50 on a CGI script, ab -c1 on the next row gave
# a quarter of its rate. Quiet is under 3 clock ticks of CPU in a quarter of a second for all
# the server's processes (its process group, children that ended included); at most $max s.
sub settle ($srv, $max = 15) {
    my $deadline = Time::HiRes::time() + $max;
    my $was      = _group_ticks($srv->{pid});
    while (Time::HiRes::time() < $deadline) {
        select undef, undef, undef, 0.25;
        my $now = _group_ticks($srv->{pid});
        return 1 if $now - $was < 3;
        $was = $now;
    }
    warn "$srv->{name} was still busy $max s after its load\n";
    return 0;
}

# CPU ticks of a process group: user and system of each process, and of its children reaped
sub _group_ticks ($pgrp) {
    my ($user, $system) = _group_split($pgrp);
    return $user + $system;
}

# The seconds of CPU a process group has used so far, in user space and in the kernel (each
# process's and its reaped children's)
sub group_cpu ($pgrp) {
    my $tick = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
    return map { $_ / $tick } _group_split($pgrp);
}

sub _group_split ($pgrp) {
    my ($user, $system) = (0, 0);
    for my $stat (glob '/proc/[0-9]*/stat') {
        open(my $fh, '<', $stat) or next;                               # Gone since the glob
        my $line = <$fh> // next;
        my @f    = split / /, substr($line, rindex($line, ')') + 2);    # After "pid (comm) "
        next unless $f[2] == $pgrp;
        $user   += $f[11] + $f[13];
        $system += $f[12] + $f[14];
    }
    return ($user, $system);
}

# What every Apache of the benchmarks has: its own root, port and files, prefork with a fixed pool
sub _apache_head (%a) {
    my $mods = '/usr/lib/apache2/modules';
    return ($a{site} ? '' : _access_log(%a)) . <<"CONF";    # (mod_log_config is built in)
ServerRoot $a{dir}
ServerName localhost
Listen 127.0.0.1:$a{port}
DefaultRuntimeDir $a{dir}
PidFile $a{dir}/httpd.pid
ErrorLog $a{dir}/error.log
LogLevel warn
User www-data
Group www-data
LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so
LoadModule authz_core_module $mods/mod_authz_core.so
StartServers $a{workers}
MinSpareServers $a{workers}
MaxSpareServers $a{workers}
MaxRequestWorkers $a{workers}
ServerLimit $a{workers}
CONF
}

# An access log as a site keeps one (access_log => 1), the same line for Apache and Perennial:
# the combined format written out (a bare Apache knows no nickname that its config did not
# define, and logs the word itself)
sub _access_log (%a) {
    return '' unless $a{access_log};
    return qq{CustomLog $a{dir}/access.log "%h %l %u %t \\"%r\\" %>s %b \\"%{Referer}i\\" }
        . qq{\\"%{User-Agent}i\\""\n};
}

# site => 1: what serves the requests inside a <VirtualHost> with its own DocumentRoot and
# access log, as a site has them (the same lines for Apache and Perennial; the client's Host
# names no host, so the first, the address's default, answers)
sub _site ($a, $inside) {
    return $inside unless $a->{site};
    my $docs = "$a->{dir}/docs";
    mkdir $docs;
    _write("$docs/index.html", "<h1>site</h1>\n");
    $inside =~ s/^/    /mg;
    return <<"CONF" . _access_log(%$a, access_log => 1) =~ s/^/    /mr . "</VirtualHost>\n";
<Directory $docs>
    Require all granted
</Directory>
<VirtualHost *:$a->{port}>
    ServerName site.test
    DocumentRoot $docs
$inside
CONF
}

# KeepAlive for the script servers, the same lines for Apache and Perennial: off unless asked,
# and then Apache's defaults (100 requests a connection, 5 s idle)
sub _keepalive (%a) {
    return "KeepAlive Off\n" unless $a{keepalive};
    return "KeepAlive On\nMaxKeepAliveRequests 100\nKeepAliveTimeout 5\n";
}

# The same httpd.conf fragment for Apache and for Perennial: that it works in both is the point
# (/handler and /handler/tables: mod_perl handler modules, bench/apps/*_handler.pl)
sub _script_locations ($dir) {
    my ($handler, $tables) = map {"$ROOT/bench/apps/${_}_handler.pl"} qw(hello tables);
    return <<"CONF";
PerlRequire $handler
PerlRequire $tables
<Location /handler>
    SetHandler modperl
    PerlResponseHandler Bench::HelloHandler
</Location>
<Location /handler/tables>
    SetHandler modperl
    PerlResponseHandler Bench::TablesHandler
</Location>
Alias /cgi-bin $dir
Alias /perlrun $dir
Alias /registry $dir
<Location /cgi-bin>
    SetHandler cgi-script
    Options +ExecCGI
</Location>
<Location /perlrun>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler ModPerl::PerlRun
    PerlOptions +ParseHeaders
</Location>
<Location /registry>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
</Location>
CONF
}

# preload_scripts (names of files in the scripts' directory): Apache compiles them at start
# for /registry, as a tuned site's startup file does with ModPerl::RegistryLoader
sub _registry_loader (%a) {
    my @names = @{$a{preload_scripts} // []} or return '';
    _write("$a{dir}/startup.pl", <<"PERL");
use ModPerl::RegistryLoader ();
my \$loader = ModPerl::RegistryLoader->new(package => 'ModPerl::Registry');
\$loader->handler("/registry/\$_", "$a{scripts}/\$_") for qw(@names);
1;
PERL
    return "PerlPostConfigRequire $a{dir}/startup.pl\n";
}

sub _write ($file, $text) {
    open(my $fh, '>', $file) or die "Can't write $file: $!\n";
    print {$fh} $text;
    close $fh or die "Can't write $file: $!\n";
}

sub _free_port () {
    my $s = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)
        or die "Can't bind: $@\n";
    return $s->sockport;
}

1;
