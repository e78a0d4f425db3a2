package Perennial::CLI;
use v5.36;
use File::Spec   ();
use Getopt::Long qw(GetOptionsFromArray);
use Perennial;
use Perennial::App;
use Perennial::Config;
use Perennial::Config::Ignored qw(ignored_summary);
use Perennial::Control;
use Perennial::Log;
use Perennial::Notify;
use Perennial::Preload;
use Perennial::CLI::Help;
use Perennial::CLI::Tools;
use Perennial::Runner;
use Perennial::Scoreboard;
use Perennial::ServerEnv;
use Perennial::Status::Proc;
use Perennial::Status::Report qw(text);

# argv -> Config, and the subcommands. The only place that reads @ARGV and %ENV.

my @OPTIONS
    = qw(access-log=s app|a=s backlog=i config|c=s daemonize|D define=s@ env|E=s error-log=s help|h
    host|o=s I=s@ keepalive! disable-keepalive keepalive-timeout=s listen|l=s@ log-level=s M=s@
    max-clients=i max-keepalive-requests=i max-requests=i max-requests-jitter=s max-spare-servers=i
    min-spare-servers=i pid=s port|p=i scoreboard=s server-limit=i set=s@ single-process|X socket|S=s@
    start-servers=i timeout=s user=s group=s version|v wait=i workers=i);

my %FLAG_KEY = (
    'access-log'             => 'access_log',
    app                      => 'app',
    backlog                  => 'listen_backlog',
    'error-log'              => 'error_log',
    env                      => 'environment',
    keepalive                => 'keep_alive',
    'keepalive-timeout'      => 'keep_alive_timeout',
    'log-level'              => 'log_level',
    'max-clients'            => 'max_clients',
    'max-keepalive-requests' => 'max_keep_alive_requests',
    'max-requests'           => 'max_requests_per_child',
    'max-requests-jitter'    => 'max_requests_jitter',
    'max-spare-servers'      => 'max_spare_servers',
    'min-spare-servers'      => 'min_spare_servers',
    pid                      => 'pid_file',
    scoreboard               => 'scoreboard_file',
    'server-limit'           => 'server_limit',
    'single-process'         => 'single_process',
    'start-servers'          => 'start_servers',
    timeout                  => 'timeout',
    daemonize                => 'daemonize',
    user                     => 'user',
    group                    => 'group',
);

# bench, tune and doctor take their own options
my %TOOLS = (
    bench  => \&Perennial::CLI::Tools::bench,
    tune   => \&Perennial::CLI::Tools::tune,
    doctor => \&Perennial::CLI::Tools::doctor
);

my %COMMANDS = (
    bench           => undef,
    doctor          => undef,
    tune            => undef,
    configtest      => \&_cmd_configtest,
    graceful        => \&_cmd_signal,
    'graceful-stop' => \&_cmd_signal,
    help            => undef,
    'reopen-logs'   => \&_cmd_signal,
    restart         => \&_cmd_signal,
    upgrade         => \&_cmd_signal,
    serve           => \&_cmd_serve,
    status          => \&_cmd_status,
    stop            => \&_cmd_signal,
    version         => undef,
);

sub run ($class, @argv) {

    # A hot upgrade runs the same command line again
    my @again   = ($^X, '-I' . _lib_dir(), File::Spec->rel2abs($0), @argv);
    my $command = @argv && exists $COMMANDS{$argv[0]} ? shift @argv : 'serve';
    local $SIG{__WARN__} = sub ($msg) { print STDERR "perennial: $msg" };
    return _reported(sub { $TOOLS{$command}->(@argv) }) if $TOOLS{$command};
    my %opt;
    @argv = _defines(@argv);
    Getopt::Long::Configure(qw(no_ignore_case bundling));
    GetOptionsFromArray(\@argv, \%opt, @OPTIONS) or return 2;
    return _help(@argv) if $command eq 'help';
    return _usage(0)    if $opt{help};
    if ($opt{version} || $command eq 'version') { say "Perennial $Perennial::VERSION"; return 0 }
    $opt{app} //= shift @argv if @argv;
    if (@argv) { print STDERR "perennial: unexpected arguments: @argv\n"; return 2 }
    $opt{command} = \@again;
    return _reported(sub { $COMMANDS{$command}->(_config(\%opt), \%opt, $command) });
}

# A command's exit code; its error, if it died, on standard error
sub _reported ($command) {
    my $code = eval { $command->() };
    return $code if defined $code;
    print STDERR $@ =~ s/^/perennial: /gmr;
    return 1;
}

sub _cmd_configtest ($config, $opt, $command) {
    say "perennial: $_" for $config->warnings, ignored_summary($config->ignored);

    # As apachectl configtest loads the modules: the PerlRequire files, PerlModules and PSGI
    # applications are loaded here too, so what would stop the start stops this
    my $log = Perennial::Log->new(
        config => $config->with(
            error_log   => '-',
            access_log  => undef,
            custom_logs => [],
            log_level   => 'warn'
        )
    );
    Perennial::Preload->new(log => $log)->load($config);
    Perennial::App->build($config, $log) if Perennial::App->serves_something($config);
    say 'Syntax OK';
    return 0;
}

sub _cmd_serve ($config, $opt, $command) {
    $ENV{PLACK_ENV}
        = $config->environment;    ## no critic (RequireLocalizedPunctuationVars) as plackup does
    return Perennial::Runner->new(
        config       => $config,
        reconfigure  => sub { _config($opt) },
        command      => $opt->{command},
        replaces     => $ENV{PERENNIAL_UPGRADE_FROM},
        notify       => Perennial::Notify->new(path => delete $ENV{NOTIFY_SOCKET}),
        default_user => 'www-data'
    )->run;
}

sub _cmd_signal ($config, $opt, $command) {
    my $pid_file = $config->pid_file
        // die "$command needs the pid file: give --pid FILE or -c CONFIG\n";
    say Perennial::Control->send($command, $pid_file, $opt->{wait} // 30);
    return 0;
}

sub _cmd_status ($config, $opt, $command) {
    my $file = $config->scoreboard_file
        // (defined $config->pid_file ? $config->pid_file . '.scoreboard' : undef)
        // die "status needs the scoreboard: give --pid FILE, --scoreboard FILE or -c CONFIG\n";
    die "Can't read scoreboard \"$file\": $!\n" unless -r $file;
    my $board = Perennial::Scoreboard->attach($file);
    my (undef, undef, $manager) = $board->header_values;

    # A scoreboard outlives a manager killed with -9: its last state is not a running server
    if (!$manager || Perennial::Control->gone($manager)) {
        print STDERR $manager
            ? "perennial: the manager (pid $manager) is gone; \"$file\" is what it left\n"
            : "perennial: \"$file\" names no manager\n";
        return 1;
    }
    my $queues = Perennial::Status::Proc::queue_of_process($manager, _backlog($config));
    print text($board, queues => $queues);
    return 0;
}

# The listen backlog the kernel grants: ListenBacklog, at most net.core.somaxconn
sub _backlog ($config) {
    my $max = 4096;
    if (open(my $fh, '<', '/proc/sys/net/core/somaxconn')) { $max = (<$fh> // $max) + 0 }
    return $config->listen_backlog < $max ? $config->listen_backlog : $max;
}

sub _config ($opt) {
    my %over;
    for my $flag (keys %FLAG_KEY) {
        $over{$FLAG_KEY{$flag}} = $opt->{$flag} if defined $opt->{$flag};
    }
    $over{keep_alive} = 0 if $opt->{'disable-keepalive'};
    _paths(\%over);
    my @listen = (@{$opt->{listen} // []}, @{$opt->{socket} // []});

    # Sockets handed over by systemd (socket activation), by Server::Starter's start_server, or
    # by the manager this one replaces (hot upgrade): they are the listeners, whatever the
    # Listen lines say. Read once: a reload must find the same ones.
    $opt->{activated} //= [_activated(), _started()];
    @listen = @{$opt->{activated}} if @{$opt->{activated}};
    my $started = Perennial::ServerEnv::started();    # A graceful restart reads it again
    @listen = map {"fd:$_"} split /,/, $started->{PERENNIAL_LISTEN_FDS}
        if $started->{PERENNIAL_LISTEN_FDS};
    push @listen, ($opt->{host} // '0.0.0.0') . ':' . ($opt->{port} // 5000)
        if defined $opt->{port} || defined $opt->{host};
    $over{listen} = \@listen          if @listen;
    _workers(\%over, $opt->{workers}) if defined $opt->{workers};
    $over{includes} = $opt->{I} if $opt->{I};
    $over{modules}  = $opt->{M} if $opt->{M};
    $over{app} //= File::Spec->rel2abs('app.psgi') if !defined $opt->{config} && -e 'app.psgi';
    $over{environment} //= $started->{PLACK_ENV}   if defined $started->{PLACK_ENV};
    return Perennial::Config->load(
        file       => $opt->{config},
        overrides  => \%over,
        directives => $opt->{set}    // [],
        defines    => $opt->{define} // []
    );
}

# systemd's socket activation (sd_listen_fds(3)): LISTEN_FDS sockets from descriptor 3, when
# LISTEN_PID is this process. The variables go, so that scripts and the programs they start do
# not take the sockets for theirs.
sub _activated () {
    my ($pid, $count) = @ENV{qw(LISTEN_PID LISTEN_FDS)};
    return unless defined $pid && defined $count && $pid =~ /\A\d+\z/ && $count =~ /\A\d+\z/;
    return unless $pid == $$;
    delete @ENV{qw(LISTEN_PID LISTEN_FDS LISTEN_FDNAMES)};
    return map {"fd:$_"} 3 .. 2 + $count;
}

# Server::Starter's start_server: SERVER_STARTER_PORT is "ADDR=FD" pairs joined by ";" (ADDR a
# port, host:port or a socket path). The variable stays: start_server's own tools read it.
sub _started () {
    my $spec = $ENV{SERVER_STARTER_PORT} // return;
    my @fds  = map { /=(\d+)\z/ ? "fd:$1" : die "SERVER_STARTER_PORT: can't read \"$_\"\n" }
        grep {length} split /;/, $spec;
    return @fds;
}

# Apache's -D NAME and -DNAME (for <IfDefine>) beside plackup's -D (daemonize): -D followed by
# a name that is not a file defines it
sub _defines (@argv) {
    my @out;
    while (@argv) {
        my $arg = shift @argv;
        if ($arg eq '-D' && @argv && $argv[0] =~ /\A[A-Za-z_]\w*\z/ && !-e $argv[0]) {
            push @out, '--define', shift @argv;
            next;
        }
        if ($arg =~ /\A-D([A-Za-z_]\w*)\z/) {
            push @out, '--define', $1;
            next;
        }
        push @out, $arg;
    }
    return @out;
}

sub _lib_dir () { $INC{'Perennial.pm'} =~ s{/Perennial\.pm\z}{}r }

# Paths on the command line are the user's, relative to where the command runs
sub _paths ($over) {
    for my $key (qw(access_log app error_log pid_file scoreboard_file)) {
        $over->{$key} = File::Spec->rel2abs($over->{$key})
            if defined $over->{$key} && $over->{$key} ne '-';
    }
}

# --workers N is Starman's fixed pool; --workers 0 serves in one process, as Starlet does
sub _workers ($over, $n) {
    return $over->{single_process} = 1 if $n == 0;
    $over->{$_} = $n for qw(start_servers min_spare_servers max_spare_servers max_clients);
    $over->{server_limit} = $n if $n > 256;
}

# perennial help: the usage and the manuals' list; perennial help TOPIC: that manual
sub _help (@topic) {
    if (!@topic) { _usage(0); print "\n", Perennial::CLI::Help::topics(); return 0 }
    my $text = Perennial::CLI::Help::manual($topic[0]);
    if (defined $text) { print $text; return 0 }
    print STDERR "perennial: no manual named \"$topic[0]\"\n", Perennial::CLI::Help::topics();
    return 2;
}

sub _usage ($code) {
    print <<'USAGE';
Usage: perennial [serve] [options] [app.psgi]
       perennial configtest -c perennial.conf
       perennial bench SPEC_FILE [--target [NAME=]URL ...] [--out DIR]
       perennial tune -c perennial.conf --url PATH ... [--ram SIZE] [--shared]
       perennial doctor [-c perennial.conf | --mode registry|perlrun|cgi] [--run] [--log FILE]
                 [--json] [DIR|SCRIPT ...]
       perennial status|stop|graceful|graceful-stop|restart|upgrade|reopen-logs
                 (--pid FILE | -c perennial.conf)

Serving:
  -c, --config FILE        httpd.conf-style configuration (see perldoc Perennial::Config)
  -l, --listen ADDR        HOST:PORT, :PORT, [IPv6]:PORT or /path/to.sock; repeatable
  -o, --host H -p, --port P  the same as --listen H:P
  -S, --socket PATH        a Unix socket; repeatable
      --workers N          a fixed pool of N workers (0: serve in one process)
      --start-servers N --min-spare-servers N --max-spare-servers N --max-clients N
      --max-requests N     requests per worker before it is replaced (0: never)
      --max-requests-jitter N|P%   spread of that limit (default 10%)
      --backlog N          listen queue length (default 511)
      --[no-]keepalive, --disable-keepalive, --keepalive-timeout S, --timeout S
      --pid FILE --error-log FILE --access-log FILE --log-level LEVEL --scoreboard FILE
  -D, --daemonize          run in the background (needs --error-log or ErrorLog)
  -D NAME, -DNAME, --define NAME   define NAME for <IfDefine NAME> (Apache's -D); repeatable
  -E, --env NAME           PLACK_ENV; 'development' adds Lint and StackTrace
  -I DIR, -M Module        add to @INC, load a module in the manager before forking
  -X, --single-process     serve in one process, for debugging
      --user NAME --group NAME   who workers run as when started as root (default www-data)
      --set 'DIRECTIVE VALUE'   any config directive, after the file's (also DIRECTIVE=VALUE); repeatable

Signals to the manager: TERM stop, WINCH graceful stop, USR1 graceful restart, HUP restart,
USR2 hot upgrade, URG reopen the logs, TTIN/TTOU one worker more/less.
USAGE
    return $code;
}

1;

__END__

=head1 NAME

Perennial::CLI - the perennial command

=head1 SYNOPSIS

    exit Perennial::CLI->run(@ARGV);

=head1 DESCRIPTION

Turns the command line into a L<Perennial::Config> (flags override the config file) and runs a
subcommand: C<serve> (the default), C<configtest>, C<status>, C<stop>, C<graceful-stop>,
C<graceful>, C<restart>, C<upgrade> and C<reopen-logs>. See L<Perennial> for the whole story.

=head1 METHODS

=head2 run

    my $exit_code = Perennial::CLI->run(@args);

=cut
