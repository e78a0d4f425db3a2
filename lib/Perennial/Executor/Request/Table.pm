package Perennial::Executor::Request::Table;
use v5.36;

# Header tables as mod_perl's APR::Table: names are case-insensitive, a name may have several
# values, and the table is both an object (get, set, add, unset) and a hash ($t->{Name} is
# the first value). Names keep the case they were first given. The entries live in the tied
# hash's object; the methods here are the object view of it.

sub new ($class) {
    tie my %hash, 'Perennial::Executor::Request::Table::Entries';
    return bless \%hash, $class;
}

sub add   ($self, $name, $value) { (tied %$self)->add($name, $value) }
sub clear ($self)                { %$self = () }

sub get ($self, $name) {
    my $values = (tied %$self)->{values}{lc $name} or return;
    return wantarray ? @$values : $values->[0];
}

sub pairs ($self) { (tied %$self)->pairs }

sub set ($self, $name, $value) {
    my $entries = tied %$self;
    $entries->unset($name);
    $entries->add($name, $value);
    return;
}

sub unset ($self, $name) { (tied %$self)->unset($name) }

package Perennial::Executor::Request::Table::Entries;    ## no critic (ProhibitMultiplePackages)

sub TIEHASH ($class) { bless {order => [], names => {}, values => {}}, $class }

sub add ($self, $name, $value) {
    push @{$self->{order}}, lc $name unless $self->{values}{lc $name};
    $self->{names}{lc $name} //= $name;
    push @{$self->{values}{lc $name}}, "$value";
    return;
}

# name => value for every value, in the order the names came
sub pairs ($self) {
    return map {
        my $key = $_;
        map { ($self->{names}{$key}, $_) } @{$self->{values}{$key}}
    } @{$self->{order}};
}

sub unset ($self, $name) {
    return unless delete $self->{values}{lc $name};
    delete $self->{names}{lc $name};
    $self->{order} = [grep { $_ ne lc $name } @{$self->{order}}];
    return;
}

# The hash view
sub CLEAR  ($self)        { %$self = (order => [], names => {}, values => {}) }
sub DELETE ($self, $name) { $self->unset($name) }
sub EXISTS ($self, $name) { exists $self->{values}{lc $name} }

sub FETCH ($self, $name) {
    my $values = $self->{values}{lc $name};
    return $values ? $values->[0] : undef;
}

sub FIRSTKEY ($self) {
    $self->{each} = [map { $self->{names}{$_} } @{$self->{order}}];
    return shift @{$self->{each}};
}
sub NEXTKEY ($self, $last) { shift @{$self->{each}} }
sub SCALAR  ($self)        { scalar @{$self->{order}} }

sub STORE ($self, $name, $value) {
    $self->unset($name);
    $self->add($name, $value);
}

1;

__END__

=head1 NAME

Perennial::Executor::Request::Table - case-insensitive header tables, as APR::Table

=head1 SYNOPSIS

    my $t = Perennial::Executor::Request::Table->new;
    $t->add('Set-Cookie' => 'a=1');
    $t->add('set-cookie' => 'b=2');
    $t->{'X-Thing'} = 'yes';
    my @cookies = $t->get('SET-COOKIE');    # ('a=1', 'b=2')
    my @pairs   = $t->pairs;

=head1 METHODS

=head2 add, clear, get, pairs, set, unset

    $t->set('Content-Language' => 'en');

C<get> gives the first value in scalar context and all of them in list context; C<pairs>
gives C<< name => value >> for every value in the order the names came.

=cut
