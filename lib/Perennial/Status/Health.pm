package Perennial::Status::Health;
use v5.36;
use Carp                      qw(croak);
use Perennial::HTTP::Response qw(plain_response);

# SetHandler server-health: one word for a load balancer's health check, from the scoreboard.
# 200 "ready" while workers serve; 503 "draining" during a graceful stop's GracefulStopDrain (the
# instance still serves, but is going: take it out), 503 "starting" while no worker is ready.
# Open to all unless the location says otherwise (the balancer is often on another host); it
# tells nothing but that word.

sub new ($class, %args) {
    my $server = $args{server} or croak 'server is required';
    return bless {server => $server}, $class;
}

sub to_app ($self) {
    return sub ($env) {
        my $board = $self->{server}{board};
        my ($status, $word)
            = $board->draining ? (503, 'draining')
            : _ready($board)   ? (200, 'ready')
            :                    (503, 'starting');
        return plain_response($status, "$word\n", 'Cache-Control' => 'no-store');
    };
}

# A worker past its start (any state but starting and an open slot)
sub _ready ($board) {
    for my $i (0 .. $board->slots - 1) {
        my $state = $board->state_of($i);
        return 1 if $state ne '.' && $state ne 'S';
    }
    return 0;
}

1;

__END__

=head1 NAME

Perennial::Status::Health - the health page a load balancer checks

=head1 SYNOPSIS

    <Location /health>
        SetHandler server-health
    </Location>

=head1 DESCRIPTION

Answers C<200 ready> while the pool serves, C<503 draining> while a graceful stop drains
(C<GracefulStopDrain>), and C<503 starting> before any worker is ready. HAProxy checks it with
C<option httpchk GET /health> and C<http-check expect status 200> (Perennial::Manual::Deployment).

=cut
