package Perennial::Prefork::Recycle;
use v5.36;
use Time::HiRes ();
use Perennial::SizeLimit;

# Which workers the manager retires (after their current request) to shed leaked memory: those
# past their lifetime, and, while the pool's private memory is over its ceiling, the largest
# idle ones first. Only decides; Perennial::Prefork does the retiring.

my ($MIN_AGE, $MEMORY_EVERY) = (10, 2);    # seconds

sub new ($class, %args) {
    my $self = bless {next_memory => 0}, $class;
    return $self->configure($args{config});
}

sub configure ($self, $config) {
    @$self{qw(lifetime jitter ceiling)}
        = ($config->max_lifetime, $config->max_lifetime_jitter, $config->pool_private_limit);
    return $self;
}

# A new worker's own lifetime: MaxLifetime minus a random part of the jitter, or undef
sub lifetime ($self) {
    my $max    = $self->{lifetime} or return;
    my $jitter = $self->{jitter};
    $jitter = $max * $1 / 100 if $jitter =~ /\A(\d+)%\z/;
    $jitter = $max / 2        if $jitter > $max / 2;
    return $max - rand $jitter;
}

# The workers to retire now, each with the reason; $idle tells whether a worker is idle
sub due ($self, $workers, $idle) {
    my $now = Time::HiRes::time();
    my @due;
    for my $w (grep { !$_->{retiring} && $_->{lifetime} } values %$workers) {
        next if $now - $w->{born} < $w->{lifetime};
        push @due, [$w, sprintf 'reached MaxLifetime (%d s)', $now - $w->{born}];
    }
    return (@due, $self->_over_ceiling($workers, $idle, $now, {map { $_->[0]{pid} => 1 } @due}));
}

# PoolPrivateLimit: the sum of the workers' private memory, read every 2 seconds
sub _over_ceiling ($self, $workers, $idle, $now, $taken) {
    return if !$self->{ceiling} || $now < $self->{next_memory};
    $self->{next_memory} = $now + $MEMORY_EVERY;
    my ($sum, @candidates) = (0);
    for my $w (values %$workers) {
        my $m = Perennial::SizeLimit::memory($w->{pid}) or next;
        $sum += $m->{private};
        next if $w->{retiring} || $taken->{$w->{pid}} || $now - $w->{born} < $MIN_AGE;
        push @candidates, [$w, $m->{private}, $idle->($w) ? 1 : 0];
    }
    my @due;
    my $limit = $self->{ceiling};
    for my $c (sort { $b->[2] <=> $a->[2] || $b->[1] <=> $a->[1] } @candidates) {
        last if $sum <= $limit;
        push @due,
            [
            $c->[0],
            "pool private memory $sum KB over PoolPrivateLimit $limit KB; "
                . ($c->[2] ? 'idle' : 'busy')
                . " worker with $c->[1] KB private"
            ];
        $sum -= $c->[1];
    }
    return @due;
}

1;

__END__

=head1 NAME

Perennial::Prefork::Recycle - retire workers by age and by the pool's memory

=head1 SYNOPSIS

    my $recycle = Perennial::Prefork::Recycle->new(config => $config);
    $worker->{lifetime} = $recycle->lifetime;
    for my $due ($recycle->due(\%workers, sub ($w) { is_idle($w) })) {
        my ($w, $why) = @$due;
    }

=head1 DESCRIPTION

C<MaxLifetime> retires a worker once it has lived that many seconds, less a random part of
C<MaxLifetimeJitter> (10% by default, at most half), so a quiet server still sheds leaked
memory and workers do not all go at once. C<PoolPrivateLimit> is a ceiling on the sum of the
workers' private memory (from smaps, read every 2 seconds): while it is passed, the largest
idle workers are retired first, then the largest busy ones (after their request). Workers
younger than 10 seconds are left alone, so a ceiling set below what fresh workers need cannot
make the pool churn.

=head1 METHODS

=head2 configure

    $recycle->configure($new_config);

=head2 due

    my @due = $recycle->due($workers, $is_idle);    # ([$worker, $reason], ...)

=head2 lifetime

    my $seconds = $recycle->lifetime;    # undef without MaxLifetime

=head2 new

    my $recycle = Perennial::Prefork::Recycle->new(config => $config);

=cut
