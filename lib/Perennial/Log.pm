package Perennial::Log;
use v5.36;
use Sys::Syslog ();
use Time::HiRes ();
use Perennial::Log::Format;

my %LEVEL  = (debug => 0,       info => 1,      warn => 2,         error => 3);
my %SYSLOG = (debug => 'debug', info => 'info', warn => 'warning', error => 'err');

# The error log and the access logs of one server (or one virtual host). A file is opened for
# appending; "|command" is a command started once, reading the lines on its standard input;
# "syslog[:facility]" (error log only) sends them to syslog.
sub new ($class, %args) {
    my $config = $args{config};
    my @access = map { [$_->{target}, $_->{format}] } @{$config->custom_logs};
    unshift @access, [$config->access_log, $Perennial::Log::Format::NICKNAMES{perennial}]
        if defined $config->access_log;
    my $self = bless {
        level      => $LEVEL{$config->log_level},
        error_path => $args{error_log} // $config->error_log,
        logs       => [map { [$_->[0], Perennial::Log::Format->compile($_->[1])] } @access],
        stderr     => $args{stderr} // 1,
        pipes      => {},
        children   => [],
    }, $class;
    $self->reopen;
    return $self;
}

# The virtual hosts' logs are made again with the application (a reload): the old ones go
sub drop_children ($self) { $self->{children} = []; return }

# A virtual host's own logs: its error log, its access logs, or those of this one
sub child ($self, %args) {
    my $child = bless {
        %$self,
        error_path => $args{error_log} // $self->{error_path},
        level      => defined $args{level} ? $LEVEL{$args{level}} : $self->{level},
        logs       => $args{logs}
        ? [map { [$_->{target}, Perennial::Log::Format->compile($_->{format})] } @{$args{logs}}]
        : $self->{logs},
        stderr   => 0,
        children => [],
        },
        ref $self;
    $child->reopen;
    push @{$self->{children}}, $child;
    return $child;
}

sub access ($self, $env, $status, $bytes, $micros, $c = undef) {
    my $logs = $self->{access} or return;
    my %r    = (
        env        => $env,
        status     => $status,
        bytes      => $bytes,
        micros     => $micros,
        vhost      => $env->{'perennial.vhost'},
        headers    => $c && $c->{res_headers},
        head_bytes => $c && $c->{head_bytes},
        keep_alive => $c && $c->{keep_alive},
    );
    for my $log (@$logs) {
        my $line = $log->[1]->line(\%r);
        utf8::encode($line) unless utf8::downgrade($line, 1);    # Bytes: no wide line dies
        syswrite $log->[0], $line;
    }
}

sub debug ($self, $msg) { $self->_log(debug => $msg) if $self->{level} <= 0 }
sub error ($self, $msg) { $self->_log(error => $msg) }
sub info  ($self, $msg) { $self->_log(info => $msg) if $self->{level} <= 1 }
sub warn  ($self, $msg) { $self->_log(warn => $msg) if $self->{level} <= 2 }

# Every file is opened before any is replaced: one that cannot be (its directory gone) dies with
# the reason and leaves the log writing where it wrote, for the caller to say so
sub reopen ($self) {
    my $error = defined $self->{error_path} ? $self->_open($self->{error_path}, 1) : $self->{error};
    my @access = map { [$self->_open($_->[0]), $_->[1]] } @{$self->{logs}};
    $self->{error} = $error;

    # Without an ErrorLog, stderr through a descriptor of Perennial's own: layers an application
    # pushes on STDERR (binmode STDERR, ':encoding(UTF-8)') do not reach the log's writes, nor
    # does descriptor 2 lent to a script's child processes (Executor::Children)
    if (!$self->{error}) {
        open(my $fh, '>&', \*STDERR) or die "Can't write the error log to stderr: $!\n";
        $self->{error} = $fh;
    }
    $self->{access} = \@access;
    delete $self->{access} unless @access;

    # Warnings and dies of application code go to the error log too
    my $path = $self->{error_path};
    if ($self->{stderr} && defined $path && $path ne '-' && ref $self->{error} ne 'ARRAY') {
        open(STDERR, '>>&', $self->{error}) or die "Can't redirect STDERR to the error log: $!\n";
    }

    # Flushed after every print, as STDERR is unless a layer with a buffer of its own is pushed
    # on it (Catalyst's binmode STDERR, ':encoding(UTF-8)'): its lines would otherwise wait
    # for the worker's exit. The flag is the handle's, so a later binmode keeps it
    STDERR->autoflush(1) if $self->{stderr};
    $_->reopen for @{$self->{children}};
    return $self;
}

sub _log ($self, $level, $msg) {
    my $out = $self->{error};
    $msg = $msg =~ s/\s+\z//r =~ s/\n/ /gr;

    # A client's bytes in a message (a request line, a path) cannot drive the reader's terminal:
    # control characters other than the tab are written as \xHH (newlines became spaces above)
    $msg =~ s/([\x00-\x08\x0b-\x1f\x7f])/sprintf '\\x%02x', ord $1/ge
        if $msg =~ /[\x00-\x08\x0b-\x1f\x7f]/;
    if (ref $out eq 'ARRAY') { Sys::Syslog::syslog($SYSLOG{$level}, '%s', $msg); return }
    my $t    = Time::HiRes::time();
    my @t    = localtime $t;
    my $line = sprintf "[%04d-%02d-%02dT%02d:%02d:%02d.%03d] [pid %d] [%s] %s\n", $t[5] + 1900,
        $t[4] + 1,
        @t[3, 2, 1, 0], ($t - int $t) * 1000, $$, $level, $msg;
    utf8::encode($line) if utf8::is_utf8($line);    # Bytes, whatever the message held
    syswrite $out, $line;
}

# A file (appended to), a pipe to a command (started once: a reopen keeps it), or syslog
sub _open ($self, $path, $errors = 0) {
    return \*STDOUT if $path eq '-';
    if ($errors && $path =~ /\Asyslog(?::(\w+))?\z/) {    # Only the error log: as Apache's
        Sys::Syslog::openlog('perennial', 'pid,ndelay', $1 // 'local7');
        return ['syslog'];
    }
    if ($path =~ /\A\|\s*(.+)\z/s) {
        return $self->{pipes}{$1} //= do {
            open(my $fh, '|-', $1) or die "Can't start the log command \"$1\": $!\n";
            $fh->autoflush(1);
            $fh;
        };
    }
    open(my $fh, '>>', $path) or die "Can't open log \"$path\": $!\n";
    return $fh;
}

1;

__END__

=head1 NAME

Perennial::Log - the error log and the access log of one process

=head1 SYNOPSIS

    my $log = Perennial::Log->new(config => $config);
    $log->info("worker $pid started");
    $log->access($env, 200, 6, 153);

=head1 DESCRIPTION

Writes error-log lines C<[time] [pid N] [level] message>, one event per line (newlines in a
message become spaces, and control characters C<\xHH>, so that no client's bytes can drive
a terminal that reads the log), and a line per
request to each access log, in its C<LogFormat> (L<Perennial::Log::Format>). Each line is one
C<write(2)> on a file opened for appending (or a pipe), so lines from many workers never
interleave. An error log or access log may be a C<|command> (started once by the manager;
the workers write to the same pipe) and the error log may be C<syslog[:facility]>.

=head1 METHODS

=head2 access

    $log->access($env, $status, $bytes, $micros, $connection);

Writes one line to each access log, if there is one.

=head2 child

    my $vhost_log = $log->child(error_log => $path, logs => [{target => ..., format => ...}]);

A virtual host's logs: its own error log, access logs and level, or else this log's. Reopened with
this one.

=head2 drop_children

    $log->drop_children;

Forgets the virtual hosts' logs (the application is built again, with new ones).

=head2 debug, info, warn, error

    $log->warn('server reached MaxClients setting');

Writes one error-log line at that level, if the level is enabled.

=head2 reopen

    $log->reopen;

Opens the log files again (after rotation, on a graceful restart).

=cut
