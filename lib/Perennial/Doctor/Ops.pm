package Perennial::Doctor::Ops;
use v5.36;
use B ();

# What an op of a compiled script names (for Perennial::Doctor::Static): the GV of a gv op, the
# string of a const, the package variable an op reads or writes, the global handle a call is
# given, an op's children. A threaded perl keeps GVs and constants in the pad of the sub, which
# the walker sets here for the sub it walks.

our $PAD;    # The pad of the sub being walked
our $CV;     # And the sub

sub has ($op, $name) {
    return 1 if $op->name eq $name;
    return 0 unless $op->flags & B::OPf_KIDS;
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        return 1 if has($kid, $name);
    }
    return 0;
}

sub kids ($op) {
    my @kids;
    return @kids unless $op->flags & B::OPf_KIDS;
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) { push @kids, $kid }
    return @kids;
}

sub gv_name ($op) {
    return unless $op->name eq 'gv';
    my $gv = gv_of($op) or return;
    return $gv->NAME;
}

# A constant string an op holds (a threaded perl keeps it in the pad)
sub string ($op, $sv) {
    $sv = $PAD->[$op->targ] if !$$sv && $op->targ;
    return unless $sv && $sv->isa('B::PV') && !($sv->FLAGS & (B::SVf_IOK | B::SVf_NOK));
    return $sv->PV;
}

# open(FH, ...) or open(our $fh...): the handle of the first argument, when it is a glob
sub global_handle ($op) {
    my $kid = $op->first;
    $kid = $kid->sibling while $kid && $$kid && $kid->name =~ /\A(?:pushmark|null)\z/;
    return unless $kid && $$kid && $kid->name eq 'gv';
    my $gv   = gv_of($kid) or return;
    my $name = $gv->NAME;
    return if $name =~ /\A(?:STDIN|STDOUT|STDERR)\z/;
    return $name;
}

# The variable an op names, through the null ops perl leaves around it: (sigil, B::GV)
sub variable ($op) {
    $op = $op->first while $op->name eq 'null' && $op->flags & B::OPf_KIDS;
    my $name = $op->name;
    return element($op) if $name eq 'multideref';
    if ($name eq 'helem' || $name eq 'aelem') {    # An element: (sigil, GV, 1)
        my ($sigil, $gv) = variable($op->first) or return;
        return ($sigil, $gv, 1);
    }
    if ($name eq 'gvsv') { my $gv = gv_of($op) or return; return ('$', $gv) }
    return _whole($op, $name);
}

# $x, @a, %h of a package, through their rv2sv, rv2av, rv2hv
my %SIGIL = (rv2sv => '$', rv2av => '@', rv2hv => '%');

sub _whole ($op, $name) {
    my $sigil = $SIGIL{$name} or return;
    my $kid   = $op->first;
    return unless $kid && $$kid;
    $kid = $kid->first if $kid->name =~ /\A(?:rv2hv|rv2av)\z/ && $kid->flags & B::OPf_KIDS;
    return unless $kid && $$kid && $kid->name eq 'gv';
    my $gv = gv_of($kid) or return;
    return ($sigil, $gv);
}

# $h{key} and $a[1] of a package variable, as perl compiles them (one multideref op)
sub element ($op) {
    my ($gv) = grep { ref && $_->isa('B::GV') } $op->aux_list($CV);
    return unless $gv;
    my $sigil = $op->string($CV) =~ /\A\$[\w:]+\[/ ? '@' : '%';
    return ($sigil, $gv, 1);
}

# A gv op's GV, also where perl keeps it in the pad (threaded perls)
sub gv_of ($op) {
    my $gv = $op->isa('B::PADOP') ? $PAD->[$op->padix] : $op->isa('B::SVOP') ? $op->sv : undef;
    return $gv if $gv && $gv->isa('B::GV');
    return;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Ops - what an op of a compiled script names

=head1 SYNOPSIS

    local $Perennial::Doctor::Ops::PAD = [$cv->PADLIST->ARRAYelt(1)->ARRAY];
    local $Perennial::Doctor::Ops::CV  = $cv;
    my ($sigil, $gv) = Perennial::Doctor::Ops::variable($op);    # ('$', B::GV of $user)
    my $handle       = Perennial::Doctor::Ops::global_handle($op);    # 'COUNTER'

=head1 DESCRIPTION

Helpers over L<B> ops for L<Perennial::Doctor::Static>: C<gv_of>, C<gv_name>, C<string> (a
constant's text), C<kids>, C<has> (an op of that name below), C<variable> and C<element> (the
package variable an op names, through perl's null ops and C<multideref>), C<global_handle>
(the handle glob a call such as C<open> or C<flock> is given, not STDIN, STDOUT or STDERR).

=cut
