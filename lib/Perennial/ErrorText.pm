package Perennial::ErrorText;
use v5.36;
use Exporter qw(import);

# What an application, a script or a handler died with, as text for the log: its text without
# the trailing newline. Code that dies with an object runs that object's overloading when it is
# made text, or asked whether it is true: an object whose overloading dies, or has no "" nor
# bool and forbids the fallback, would make the server's own handling of the failure die in
# turn, and end the worker. Such an object is named by its class instead. Never dies.

our @EXPORT_OK = qw(error_text);

sub error_text ($err) {
    my $text = eval { defined $err ? "$err" : '' };
    return 'an exception object of class ' . ref($err) . ' that cannot be made text'
        unless defined $text;
    $text =~ s/\s+\z//;
    return length $text ? $text : 'unknown error';
}

1;

__END__

=head1 NAME

Perennial::ErrorText - what code died with, as text that can always be made

=head1 SYNOPSIS

    use Perennial::ErrorText qw(error_text);
    eval { $app->($env); 1 } or $log->error('app died: ' . error_text($@));

=head1 DESCRIPTION

C<error_text> gives the text of an error (C<$@>), trailing whitespace removed, C<unknown error>
for none (undef, or an empty text), and for an object whose overloading dies or has no text
(C<< use overload bool => ... >> without C<"">, and C<< fallback => 0 >>) its class, so that the
server's own handling of a failure never dies of it.

=head1 FUNCTIONS

=head2 error_text

    my $text = error_text($@);

=cut
