package Perennial::Executor::Errors;
use v5.36;
use Perennial::Executor::Layers;

# The tied STDERR of a resident script: each line goes to the error log with the script's
# path, as mod_cgi logs "stderr from SCRIPT: ..." for forked scripts

sub new ($class, $log, $file) { bless {log => $log, file => $file, buf => ''}, $class }

# Tied with the object that new made: one per script, kept from request to request
sub TIEHANDLE ($class, $self) {$self}

sub BINMODE ($self, @layer) {
    ($self->{layers} //= Perennial::Executor::Layers->new)->push_layers(@layer);
}
sub CLOSE  ($self) { $self->flush; 1 }
sub FILENO ($self) {undef}

# Reopening STDERR inside a request is refused, quietly
sub OPEN ($self, @args) {0}

# The layers for a request: those the script asked for as it compiled, or none
sub reset_layers ($self, $layers = undef) { $self->{layers} = $layers && $layers->copy }

sub PRINT ($self, @list) {
    my $text = join($, // '', @list) . ($\ // '');
    $self->take(Perennial::Executor::Layers::bytes_of($self->{layers}, $text));
    return 1;
}

# Bytes for the log, as they are (a child process's standard error, a loop turn's)
sub take ($self, $bytes) {
    $self->{buf} .= $bytes;
    $self->_lines;
    return;
}

# printf and syswrite as print, as the compile-time stand-in has them
*PRINTF = \&Perennial::Executor::Layers::PRINTF;
*WRITE  = \&Perennial::Executor::Layers::WRITE;

# What is left without a newline (close STDERR, the end of a request)
sub flush ($self) {
    $self->{log}->error("stderr from $self->{file}: $self->{buf}") if length $self->{buf};
    $self->{buf} = '';
    return;
}

# The request ended: a binmode lasted it, and the next begins with the script's layers
sub end_request ($self) {
    $self->flush if length $self->{buf};
    delete $self->{layers};
    return;
}

sub _lines ($self) {
    while ($self->{buf} =~ s/\A([^\n]*)\n//) {
        $self->{log}->error("stderr from $self->{file}: $1") if length $1;
    }
}

1;

__END__

=head1 NAME

Perennial::Executor::Errors - a resident script's STDERR, into the error log line by line

=head1 SYNOPSIS

    my $errors = Perennial::Executor::Errors->new($log, $script_path);
    tie local *STDERR, 'Perennial::Executor::Errors', $errors;
    print STDERR "something odd\n";    # [error] stderr from /srv/cgi-bin/x.pl: something odd

=head1 DESCRIPTION

Collects what a script prints to STDERR and logs each complete line with the script's path,
the same line mod_cgi mode writes for a forked script. A last line without a newline is logged
when the request ends.

=head1 METHODS

=head2 flush, end_request

    tied(*STDERR)->flush;          # the unfinished line, logged
    $errors->end_request;          # and the layers a binmode pushed, gone

=head2 take

    $errors->take($bytes);    # a child process's, or an accept loop's, as they are

=head2 new

    my $errors = Perennial::Executor::Errors->new($log, $script_path);

=cut
