package Perennial::Test::Apache;
use v5.36;
use Exporter qw(import);
use IO::Socket::IP;
use Perennial::Test qw(http_request start_program);

# The reference: Debian's Apache 2.4, started by the test itself in the foreground with its own
# configuration, port and run directory (never the system's instance), and one request as raw
# bytes answered as (status, headers, body) so two servers' answers can be compared.

our @EXPORT_OK = qw(apache_available request start_apache);

sub apache_available () {
    return -x '/usr/sbin/apache2' && -e '/usr/lib/apache2/modules/mod_perl.so';
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

# One request, as Perennial::Test's http_request
sub request ($port, $method, $host, $path, %headers) {
    return http_request($port, $method, $host, $path, headers => \%headers);
}

1;
