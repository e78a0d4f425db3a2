package Perennial::Executor::Umask;
use v5.36;
use Perennial::Twins;

# A script that sets its umask must not leave it to the next request, and putting it back is a
# system call. The C (xs/Umask.xs) marks every umask op compiled after it loads, and says
# whether one ran since it was last asked; the Perl twin always says yes.
Perennial::Twins::install(__PACKAGE__, qw(ran put_back));

sub pp_ran () {1}

# The worker's umask, put back after a request in which a umask ran
sub pp_put_back ($mask) { umask $mask; return }

1;

__END__

=head1 NAME

Perennial::Executor::Umask - a script's umask put back after its request, without a system call when it did not change it

=head1 SYNOPSIS

    use Perennial::Executor::Umask;    # before the site's code compiles
    my $umask = umask;
    run_the_script();
    Perennial::Executor::Umask::put_back($umask);    # only if a umask ran meanwhile

=head1 DESCRIPTION

Perennial::Executor puts a worker's umask back after each script request. With the C build, it
does so only when a C<umask> (or C<POSIX::umask>) ran during the request: every umask op that
perl compiles after this module has loaded is marked, and C<CORE::umask> when it loads. A
umask call compiled before it loaded (a module loaded ahead of Perennial under plackup), or
made from C, is not seen; C<perennial serve> loads it first. Without the C build the umask is
put back after every request.

=head1 FUNCTIONS

=head2 ran

    my $maybe = Perennial::Executor::Umask::ran();    # and forgets

Whether a umask op ran since the last call (true on the first), so the umask must be put
back.

=head2 put_back

    Perennial::Executor::Umask::put_back($umask);

Sets the umask to C<$umask> when a umask op ran since the last look (C<ran>), and forgets. Its
own call is made in C: a C<umask> in Perl, compiled after this module loaded, would itself be
marked, and put the umask back after every request that followed.

=cut
