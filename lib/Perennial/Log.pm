package Perennial::Log;
use v5.36;
use POSIX       qw(strftime);
use Time::HiRes ();

my %LEVEL = (debug => 0, info => 1, warn => 2, error => 3);
my @MONTH = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

sub new ($class, %args) {
    my $config = $args{config};
    my $self   = bless {
        level       => $LEVEL{$config->log_level},
        error_path  => $config->error_log,
        access_path => $config->access_log,
        clf_second  => -1,
    }, $class;
    $self->reopen;
    return $self;
}

sub access ($self, $env, $status, $bytes, $micros) {
    my $fh  = $self->{access} or return;
    my $now = int Time::HiRes::time();
    if ($now != $self->{clf_second}) {
        my @t = localtime $now;
        $self->{clf_second} = $now;
        $self->{clf_time}   = sprintf '%02d/%s/%04d:%02d:%02d:%02d %s', $t[3], $MONTH[$t[4]],
            $t[5] + 1900, @t[2, 1, 0],
            strftime('%z', @t);
    }
    my $line = sprintf qq{%s - %s [%s] "%s %s %s" %d %s "%s" "%s" %d\n},
        $env->{REMOTE_ADDR} // '-', _clean($env->{REMOTE_USER} // '-'), $self->{clf_time},
        _clean($env->{REQUEST_METHOD}), _clean($env->{REQUEST_URI}), $env->{SERVER_PROTOCOL},
        $status, ($bytes ? $bytes : '-'), _clean($env->{HTTP_REFERER} // '-'),
        _clean($env->{HTTP_USER_AGENT} // '-'), $micros;
    syswrite $fh, $line;
}

sub debug ($self, $msg) { $self->_log(debug => $msg) if $self->{level} <= 0 }
sub error ($self, $msg) { $self->_log(error => $msg) }
sub info  ($self, $msg) { $self->_log(info => $msg) if $self->{level} <= 1 }
sub warn  ($self, $msg) { $self->_log(warn => $msg) if $self->{level} <= 2 }

sub reopen ($self) {
    $self->{error} = _open($self->{error_path}) if defined $self->{error_path};
    $self->{error} //= \*STDERR;
    $self->{access} = _open($self->{access_path}) if defined $self->{access_path};

    # Warnings and dies of application code go to the error log too
    if (defined $self->{error_path} && $self->{error_path} ne '-') {
        open(STDERR, '>>&', $self->{error}) or die "Can't redirect STDERR to the error log: $!\n";
    }
    return $self;
}

sub _clean ($text) {
    return '-' unless defined $text;
    $text =~ s/([^\x20-\x7e]|["\\])/sprintf '\\x%02x', ord $1/ge;
    return $text;
}

sub _log ($self, $level, $msg) {
    my $t    = Time::HiRes::time();
    my @t    = localtime $t;
    my $line = sprintf "[%04d-%02d-%02dT%02d:%02d:%02d.%03d] [pid %d] [%s] %s\n", $t[5] + 1900,
        $t[4] + 1,
        @t[3, 2, 1, 0], ($t - int $t) * 1000, $$, $level, $msg =~ s/\s+\z//r =~ s/\n/ /gr;
    syswrite $self->{error}, $line;
}

sub _open ($path) {
    return \*STDOUT if $path eq '-';
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

Writes error-log lines C<[time] [pid N] [level] message>, one event per line, and access-log
lines in Apache's combined format followed by the duration in microseconds. Each line is one
C<write(2)> on a file opened for appending, so lines from many workers never interleave.

=head1 METHODS

=head2 access

    $log->access($env, $status, $bytes, $micros);

Writes one access-log line, if an access log is configured.

=head2 debug, info, warn, error

    $log->warn('server reached MaxClients setting');

Writes one error-log line at that level, if the level is enabled.

=head2 reopen

    $log->reopen;

Opens the log files again (after rotation, on a graceful restart).

=cut
