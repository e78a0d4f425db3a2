package Perennial::Executor::Catalog;
use v5.36;
use Scalar::Util qw(weaken);

# The scripts this process has compiled, for the Perl status view: every executor registers
# here, and a compile tells the one listener (the worker publishing its list to the scoreboard)

my @EXECUTORS;
my $LISTENER;

sub register ($executor) {
    @EXECUTORS = grep {defined} @EXECUTORS;
    push @EXECUTORS, $executor;
    weaken $EXECUTORS[-1];
}

sub compiled () {
    [map { $_->compiled } grep {defined} @EXECUTORS]
}

# One line per script, tab-separated, as the scoreboard notes hold them
sub as_text () {
    return join '', map {
        join("\t",
            map { $_ // '' } @$_{qw(file package handler compiled compile_ms mtime depends_on)})
            . "\n"
    } @{compiled()};
}

sub changed () { $LISTENER->() if $LISTENER }

sub from_text ($text) {
    my @scripts;
    for my $line (split /\n/, $text // '') {
        my %s;
        @s{qw(file package handler compiled compile_ms mtime depends_on)} = split /\t/, $line, -1;
        push @scripts, \%s if length $s{file};
    }
    return \@scripts;
}

sub on_change ($code) { $LISTENER = $code }

1;

__END__

=head1 NAME

Perennial::Executor::Catalog - the scripts a process has compiled

=head1 SYNOPSIS

    Perennial::Executor::Catalog::on_change(sub { $board->note($slot, Perennial::Executor::Catalog::as_text()) });
    my $scripts = Perennial::Executor::Catalog::compiled();    # [{file, package, compiled, ...}]

=head1 DESCRIPTION

Registry executors keep their compiled scripts; this module lists them across every executor
of the process, with the package each was compiled into, when it was compiled, how long that
took, the file's modification time and the site libraries it depends on
(L<Perennial::Executor::Libraries>). A worker publishes the list in its scoreboard notes
whenever it compiles, so the Perl status page shows every worker's scripts.

=head1 FUNCTIONS

=head2 as_text, from_text

    my $text    = Perennial::Executor::Catalog::as_text();
    my $scripts = Perennial::Executor::Catalog::from_text($text);

=head2 changed

Called by an executor after it compiled a script.

=head2 compiled

=head2 on_change

=head2 register

=cut
