package Perennial::ModPerl::Server;
use v5.36;
use Perennial                   ();
use Perennial::HTTP::Response   ();
use Perennial::Config::Settings ();

# The objects around mod_perl's request: the server (Apache2::ServerRec, from
# Apache2::ServerUtil->server or $r->server), the client's connection (Apache2::Connection) and
# the loggers of Apache2::Log ($r->log, $s->log), which write to Perennial's error log.

my %MAIN = (hostname => 'localhost', port => 80, admin => '[no address given]', root => '/');
my %DEFINED;    # -D NAME and Define, as Apache2::ServerUtil::exists_config_define sees them
my %ALIASES;    # A virtual host's ServerAlias names, by its ServerName

# Apache's log levels as Apache2::Const's LOG_* numbers, for Perennial's four
my %LOG_LEVEL = (error => 3, warn => 4, info => 6, debug => 7);
my $LOG;            # The worker's error log
my $MAIN_SERVER;    # Its Apache2::ServerRec
my %PUSHED;         # PerlChildInitHandler and PerlChildExitHandler code, pushed at start
my %VIRTUAL;        # The virtual hosts' Apache2::ServerRec

my $BUILDS = 0;     # How many times the configuration was read (a graceful restart reads it again)

# Set once at start from the configuration, and again on each graceful restart
sub configure ($class, %args) {
    $BUILDS++;
    $MAIN{$_} = $args{$_}
        for grep { defined $args{$_} } qw(hostname port admin root vars error_fname limits);
    $LOG     = $args{log} if $args{log};
    %DEFINED = map { ($_ => 1) } @{$args{defines} // []};
    %ALIASES = %{$args{aliases} // {}};
    undef $MAIN_SERVER;
    %VIRTUAL = ();
    return;
}

sub error_log ($class) {$LOG}

# The configuration's settings that Apache2::ServerRec reports (configure's limits)
sub limits ($class) {qw(timeout keep_alive keep_alive_timeout max_keep_alive_requests log_level)}

# Before the start-up code runs again (a graceful restart): what it pushed last time goes, so
# a hook pushed as a new anonymous sub each time is not added once more per restart
sub forget_pushed ($class) { %PUSHED = (); return }

# The code pushed for a worker phase: [name, code] as the configured hooks are
sub pushed ($class, $phase) {
    return
        map { ["pushed $phase " . ($_ + 1), $PUSHED{$phase}[$_]] } 0 .. $#{$PUSHED{$phase} // []};
}

package Apache2::ServerRec;    ## no critic (ProhibitMultiplePackages)
use v5.36;

sub main ($class) { $MAIN_SERVER //= bless {%MAIN, virtual => 0}, $class }

# The server a request reached: its virtual host's (one object per host and port), or the main
# server
sub for_request ($class, $env) {
    my $name = $env->{'perennial.vhost'};
    return $class->main if !defined $name || $name eq $MAIN{hostname};
    my $port = $env->{SERVER_PORT} // $MAIN{port};
    return $VIRTUAL{"$name:$port"} //= bless {
        %MAIN,
        names    => $ALIASES{$name} // [],
        hostname => $name,
        port     => $port,
        admin    => $env->{'perennial.admin'} // $MAIN{admin},
        virtual  => 1
    }, $class;
}

# PerlSetVar and PerlAddVar written at server level
sub dir_config ($self, $key = undef) {
    my $table = $self->{dir_config} //= Perennial::ModPerl::Table->from_vars($MAIN{vars});
    return defined $key ? scalar $table->get($key) : $table;
}

# The ErrorLog, as configured (undef: the terminal, or syslog's name)
sub error_fname ($self) { $self->{error_fname} }
sub is_virtual  ($self) { $self->{virtual} }

# Timeout, KeepAlive, KeepAliveTimeout, MaxKeepAliveRequests and LogLevel as Apache's
# server_rec has them: times in microseconds, the level as a LOG_* number (Perennial's four
# levels: error, warn, info, debug)
sub keep_alive         ($self) { $self->_limit('keep_alive') ? 1 : 0 }
sub keep_alive_max     ($self) { $self->_limit('max_keep_alive_requests') }
sub keep_alive_timeout ($self) { int($self->_limit('keep_alive_timeout') * 1_000_000) }
sub loglevel           ($self) { $LOG_LEVEL{$self->_limit('log_level') // 'info'} // 6 }
sub timeout            ($self) { int($self->_limit('timeout') * 1_000_000) }

# A virtual host's ServerAlias names; undef for the main server, as Apache's
sub names ($self) { $self->{virtual} ? [@{$self->{names} // []}] : undef }

sub _limit ($self, $key) {
    my $limits = $self->{limits} // {};
    return exists $limits->{$key}
        ? $limits->{$key}
        : Perennial::Config::Settings::setting_default($key);
}
sub log       ($self)           { Apache2::Log::Server->new('', $LOG) }
sub log_error ($self, @message) { $LOG->error(join '', @message) if $LOG; return }
sub port      ($self)           { $self->{port} }

# Code a module pushes while loading (Apache::DBI's child init and exit); once per sub
sub push_handlers ($self, $phase, @codes) {
    die "push_handlers on the server: Perennial runs PerlChildInitHandler and "
        . "PerlChildExitHandler, not $phase\n"
        unless $phase =~ /\APerlChild(?:Init|Exit)Handler\z/;
    for my $code (map { ref $_ eq 'ARRAY' ? @$_ : $_ } @codes) {
        push @{$PUSHED{$phase}}, $code unless grep { $_ == $code } @{$PUSHED{$phase} // []};
    }
    return 1;
}
sub server_admin    ($self)           { $self->{admin} }
sub server_hostname ($self)           { $self->{hostname} }
sub warn            ($self, @message) { $LOG->warn(join '', @message) if $LOG; return }

package Apache2::ServerUtil;    ## no critic (ProhibitMultiplePackages)
use v5.36;

sub server      ($class = undef) { Apache2::ServerRec->main }
sub server_root ($class = undef) { $MAIN{root} }

# As a child sees it under Apache, which reads its configuration twice as it starts: 2, then
# one more for each graceful restart (a startup file's `restart_count() > 1` is the real start)
sub restart_count ($class = undef) { $BUILDS + 1 }

# What the Server header says (ServerTokens), and the whole of it
sub get_server_banner  ($class = undef) { Perennial::HTTP::Response::server_product() }
sub get_server_version ($class = undef) {"Perennial/$Perennial::VERSION"}

# Whether the server was started with -D NAME, or the configuration Defines it
sub exists_config_define ($name) { $DEFINED{$name} ? 1 : 0 }

# The user and group the workers run as (User, Group), as their own ids say
sub user_id  ($class = undef) {$<}
sub group_id ($class = undef) { (split ' ', $()[0] }

package Apache2::Util;    ## no critic (ProhibitMultiplePackages)
use v5.36;
use POSIX ();

# A time as text: HTTP's date format, in GMT, unless told otherwise (ap_ht_time)
sub ht_time ($pool = undef, $time = time, $format = '%a, %d %b %Y %H:%M:%S %Z', $gmt = 1) {
    $format =~ s/%Z/GMT/g if $gmt;    # As Apache's: GMT, whatever the C library calls it
    return POSIX::strftime($format, $gmt ? gmtime $time : localtime $time);
}

# A path with what may not stand in a URL's path %-escaped, lower-case hex (ap_os_escape_path)
sub escape_path ($path, $pool = undef, $partial = 1) {
    return $path =~ s{([^A-Za-z0-9\$\-_.+!*'(),:\@&=/~])}{sprintf '%%%02x', ord $1}ger;
}

package Apache2::Connection;    ## no critic (ProhibitMultiplePackages)
use v5.36;
use Perennial::VirtualHosts;

sub new ($class, $env) { bless {env => $env, notes => undef}, $class }

# The client's address; a handler may set another (mod_perl's setter, as a proxy's real-IP
# handler in PerlPostReadRequestHandler does): kept for the request's later handlers, which ask
# the connection again; REMOTE_ADDR stays the request's (Apache's r->useragent_ip), as there
sub client_ip ($self, @new) {
    $self->{env}{'perennial.client_ip'} = $new[0] if @new;
    return $self->{env}{'perennial.client_ip'} // $self->{env}{REMOTE_ADDR};
}

# Unique among the connections open at one time: the worker and the client's port
sub id ($self) { $$ * 65_536 + ($self->{env}{REMOTE_PORT} // 0) }

# CONN_UNKNOWN (0): Apache decides keep-alive when the head goes, after the handler has run
sub keepalive ($self) {0}

sub local_ip    ($self) { Perennial::VirtualHosts::local_ip($self->{env}) }
sub notes       ($self) { $self->{notes} //= Perennial::ModPerl::Table->new }
sub remote_host ($self) { $self->{env}{REMOTE_HOST} }    # Undef: no lookups, as Apache's

# The two ends of the connection as APR::SockAddr: ip_get and port
sub client_addr ($self) {    # The TCP peer: a proxy's, behind RemoteIPHeader, as Apache's
    my $env = $self->{env};
    return APR::SockAddr->new($env->{'perennial.peer'} // $env->{REMOTE_ADDR}, $env->{REMOTE_PORT});
}
sub local_addr ($self) { APR::SockAddr->new(Perennial::VirtualHosts::local_end($self->{env})) }
sub remote_ip  ($self, @new) { $self->client_ip(@new) }

# Apache2::Log: $r->log->error(...), $s->log->warn(...); Apache's eight levels onto Perennial's
package APR::SockAddr;       ## no critic (ProhibitMultiplePackages)
use v5.36;

# One end of a connection (Apache2::Connection's client_addr and local_addr)
sub new    ($class, $ip, $port) { bless {ip => $ip, port => $port}, $class }
sub ip_get ($self)              { $self->{ip} }
sub port   ($self)              { 0 + ($self->{port} // 0) }

package Apache2::Log::Request;    ## no critic (ProhibitMultiplePackages)
use v5.36;
use Perennial::Config;

sub new ($class, $prefix, $log) { bless {prefix => $prefix, log => $log}, $class }

for my $level (qw(emerg alert crit error warn notice info debug)) {
    my $method = Perennial::Config->level_of($level);
    no strict 'refs';    ## no critic (ProhibitNoStrict) one method per level
    *{"Apache2::Log::Request::$level"} = sub ($self, @message) {
        $self->{log}->$method($self->{prefix} . join '', @message) if $self->{log};
        return;
    };
}

package Apache2::Log::Server;    ## no critic (ProhibitMultiplePackages)
our @ISA = ('Apache2::Log::Request');

1;

__END__

=head1 NAME

Perennial::ModPerl::Server - Apache2::ServerRec, Apache2::Connection and Apache2::Log

=head1 SYNOPSIS

    my $s = Apache2::ServerUtil->server;
    print $s->server_hostname, ':', $s->port;
    my $ip = $r->connection->client_ip;
    $r->log->notice('user logged in');

=head1 DESCRIPTION

Apache2::ServerRec: C<server_hostname>, C<port>, C<server_admin>, C<is_virtual>, C<log>,
C<log_error>, C<warn>. Apache2::ServerUtil: C<server>, C<server_root>. Apache2::Connection:
C<client_ip>, C<remote_ip>, C<remote_host>, C<local_ip>, C<keepalive>, C<id>, C<notes>.
Apache2::Log's loggers have Apache's levels (C<emerg> .. C<debug>); emerg, alert and crit are
written at Perennial's error level, notice at info.

=head1 METHODS

=head2 configure

    Perennial::ModPerl::Server->configure(hostname => 'www.example.com', port => 80,
        admin => 'webmaster@example.com', root => '/etc/apache2', log => $log);

=cut
