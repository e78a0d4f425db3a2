package Perennial::Test::Apache;
use v5.36;
use Exporter qw(import);
use IO::Socket::IP;
use Test::More ();
use Perennial::Test
    qw(http_request raw_request scratch_dir script_modes start_program start_server write_file);

# The reference: Debian's Apache 2.4, started by the test itself in the foreground with its own
# configuration, port and run directory (never the system's instance), and one request as raw
# bytes answered as (status, headers, body) so two servers' answers can be compared.

our @EXPORT_OK = qw(answer_of apache_and_perennial apache_available apache_head apache_serving
    request same_access script_site site_files start_apache);

sub apache_available () {
    return -x '/usr/sbin/apache2' && -e '/usr/lib/apache2/modules/mod_perl.so';
}

# The head of a test's own httpd.conf: its ServerRoot, the port from $port_var and the run
# directory from SITE_RUN (both given to start_apache), prefork, and the modules named
# (authz_core, alias, cgi, perl ...); mime brings Debian's TypesConfig
sub apache_head ($root, $port_var, @modules) {
    my $dir = '/usr/lib/apache2/modules';
    return join "\n", "ServerRoot $root", 'ServerName localhost', "Listen 127.0.0.1:\${$port_var}",
        'DefaultRuntimeDir ${SITE_RUN}', 'PidFile ${SITE_RUN}/apache2.pid',
        'ErrorLog ${SITE_RUN}/error.log', 'User www-data', 'Group www-data',
        "LoadModule mpm_prefork_module $dir/mod_mpm_prefork.so",
        (map {"LoadModule ${_}_module $dir/mod_$_.so"} @modules),
        ((grep { $_ eq 'mime' } @modules) ? 'TypesConfig /etc/mime.types' : ()), '';
}

# A site's files under $dir (name => text), readable by Apache's children (www-data): a .pl is
# a script this perl runs (its #! line added, mode 0755). Returns $dir.
sub site_files ($dir, %files) {
    for my $name (sort keys %files) {
        my $script = $name =~ /\.pl\z/;
        write_file("$dir/$name", ($script ? "#!$^X\n" : '') . $files{$name}, $script ? 0755 : 0644);
    }
    system('chmod', '-R', 'a+rX', $dir) == 0 or die "Can't open $dir to Apache's children\n";
    return $dir;
}

# Starts apache2 -f $conf with %env in its environment (the port as $env->{...}); returns
# (pid, port) once it answers
sub start_apache ($conf, $port_var, %env) {
    return start_program(
        sub ($port) {
            $ENV{$_}        = $env{$_} for keys %env; ## no critic (RequireLocalizedPunctuationVars)
            $ENV{$port_var} = $port;                  ## no critic (RequireLocalizedPunctuationVars)
            return ('/usr/sbin/apache2', '-f', $conf, '-DFOREGROUND');
        },
        sub ($port) { IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port) },
        "$env{SITE_RUN}/apache.out"
    );
}

# The configuration of a site of scripts under $dir, which Apache and Perennial both read: files
# in docs (DocumentRoot), scripts in cgi-bin under mod_cgi (/cgi-bin/), ModPerl::Registry
# (/registry) and ModPerl::PerlRun (/perlrun), all of $dir open to everyone
sub script_site ($dir) {
    return
          "DocumentRoot $dir/docs\nScriptAlias /cgi-bin/ $dir/cgi-bin/\n"
        . script_modes("$dir/cgi-bin")
        . "<Directory $dir>\n    Require all granted\n    Options +ExecCGI\n</Directory>\n";
}

# Apache serving $conf from $dir/apache.conf, after apache_head with @modules (its port in
# APACHE_PORT): (pid, port) once it answers; the test bails out when it does not start
sub apache_serving ($dir, $conf, @modules) {
    write_file("$dir/apache.conf", apache_head($dir, 'APACHE_PORT', @modules) . $conf);
    my ($apid, $aport) = start_apache("$dir/apache.conf", 'APACHE_PORT', SITE_RUN => scratch_dir())
        or Test::More::BAIL_OUT('Apache did not start');
    return ($apid, $aport);
}

# Apache with mod_perl serving $dir's $locations (its directory open to all), and Perennial with
# one worker serving the same: (Apache's pid, its port, the Perennial::Test server)
sub apache_and_perennial ($dir, $locations) {
    my ($apid, $aport) = apache_serving(
        $dir,
        "<Directory $dir>\n    Require all granted\n</Directory>\n$locations",
        qw(authz_core alias mime perl)
    );
    return ($apid, $aport, start_server(workers => 1, conf => $locations));
}

# One HTTP/1.0 request as raw bytes, for comparing two servers' answers: the status code, the
# header fields named in %$compared (lower case, every value, sorted) and the body. @rest:
# header lines, then a body (the last item without a colon)
sub answer_of ($port, $compared, $method, $path, @rest) {
    my $body    = @rest && $rest[-1] !~ /:/ ? pop @rest : '';
    my @headers = (@rest, length $body ? ('Content-Length: ' . length $body) : ());
    my $raw     = raw_request($port,
        join("\r\n", "$method $path HTTP/1.0", 'Host: localhost', @headers, '', '') . $body);
    my ($top, $content) = split /\r\n\r\n/, $raw, 2;
    my ($status, @lines) = split /\r\n/, $top // '';
    my @head = map { /\A([^:]+):\s*(.*)\z/ && $compared->{lc $1} ? (lc($1) . ": $2") : () } @lines;
    return {
        status => ($status // '') =~ m{\AHTTP/1\.\d (\d+)} ? $1 : 'none',
        head   => [sort @head],
        body   => $content // ''
    };
}

# Each URL asked of Apache (its port) and of Perennial (its port) as each client of %$who (a
# name => its header lines): one test for each, that both answer with the same status and
# WWW-Authenticate
sub same_access ($aport, $port, $urls, $who) {
    for my $url (@$urls) {
        for my $name (sort keys %$who) {
            my @ask  = (GET => $url, @{$who->{$name}});
            my $want = answer_of($aport, {'www-authenticate' => 1}, @ask);
            my $got  = answer_of($port,  {'www-authenticate' => 1}, @ask);
            Test::More::is_deeply(
                [@$got{qw(status head)}],
                [@$want{qw(status head)}],
                "$url as $name: $want->{status}, as Apache"
            );
        }
    }
    return;
}

# One request, as Perennial::Test's http_request
sub request ($port, $method, $host, $path, %headers) {
    return http_request($port, $method, $host, $path, headers => \%headers);
}

1;
