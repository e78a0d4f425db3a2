package Perennial::Doctor::Lexicals;
use v5.36;
use B ();

# Which lexical (my) variables an op writes, and what perl knows of them (for
# Perennial::Doctor::Static): a sub's pad names its variables, and marks those that come from
# the file around it (PADNAMEt_OUTER).

# Ops that write to their first operand: add to it, or set it only when it has no value yet
my %CHANGES = map { $_ => 1 }
    qw(push unshift preinc postinc predec postdec orassign dorassign sassign aassign);

# Ops whose target can be a lexical written in place ($x = $x + 1 and $x .= "..." compile so)
my %TARGET_MY = map { $_ => 1 }
    qw(concat multiconcat add subtract multiply divide modulo repeat join sprintf substr);

# $x .= ... (a concat that writes to its first operand)
sub appends ($op, $name) {
    return ($name eq 'concat' || $name eq 'multiconcat') && $op->flags & B::OPf_STACKED;
}

# The pad slots (or 'sigil name' for an element of one) that an op of $cv writes
sub written ($op, $name, $cv) {
    return $op->targ if $TARGET_MY{$name} && $op->private & B::OPpTARGET_MY;
    return unless $CHANGES{$name} || appends($op, $name);
    return if $name eq 'sassign' && !$op->isa('B::BINOP');    # Inside $x ||= ...: seen above
    my $target
        = $name eq 'sassign' ? $op->last
        : $name eq 'aassign' ? $op->last->first
        :                      $op->first;
    $target = $target->sibling while $target && $$target && $target->name eq 'pushmark';
    return _lexical_of($target, $cv);
}

sub _lexical_of ($op, $cv) {
    return unless $op && $$op;
    $op = $op->first while $op->name eq 'null' && $op->flags & B::OPf_KIDS;
    my $name = $op->name;
    return $op->targ if $name eq 'padsv' || $name eq 'padav' || $name eq 'padhv';
    return _lexical_of($op->first, $cv) if $name eq 'helem' || $name eq 'aelem';
    if ($name eq 'multideref') {
        my ($var, $open) = $op->string($cv) =~ /\A\$(\w+)([\[{])/ or return;
        return ($open eq '[' ? '@' : '%') . $var;
    }
    return;
}

# A variable's name ('$x'), from its pad slot or as given
sub name_of ($cv, $slot) {
    return $slot unless $slot =~ /\A\d+\z/;
    my $pn = $cv->PADLIST->ARRAYelt(0)->ARRAYelt($slot);
    return $$pn ? $pn->PV : undef;
}

# The name of a variable that comes from the sub's file, not the sub (its slot, or its name)
sub outer_name ($cv, $slot) {
    my $names = $cv->PADLIST->ARRAYelt(0);
    for my $i ($slot =~ /\A\d+\z/ ? ($slot) : (1 .. $names->MAX)) {
        my $pn = $names->ARRAYelt($i);
        next unless $$pn && ($pn->FLAGS & B::PADNAMEt_OUTER);
        my $pv = $pn->PV // next;
        return $pv if $slot =~ /\A\d+\z/ || $pv eq $slot;
    }
    return;
}

# The file-level my variables a library's named sub changes (their names)
sub kept ($op, $name, $cv) {
    return map { outer_name($cv, $_) // () } written($op, $name, $cv);
}

# A script's file-level my variables as an op writes them, into $pad: 'constant' while every
# write gives constants only, 'changed' after any other. $body: the op is in the script's body
# (else in a named sub, where the file-level ones are those from outside).
sub note_file_lexicals ($op, $name, $cv, $body, $pad) {
    my @slots    = written($op, $name, $cv) or return;
    my $constant = ($name eq 'sassign' || $name eq 'aassign') && $body && constant($op->first);
    for my $var (map { $body ? name_of($cv, $_) : outer_name($cv, $_) } @slots) {
        next unless defined $var;
        my $was = $pad->{$var} // 'constant';
        $pad->{$var} = $constant && $was eq 'constant' ? 'constant' : 'changed';
    }
    return;
}

# Whether a value is made of constants only (my @DAYS = qw(Sun Mon ...))
my %CONSTANT = map { $_ => 1 } qw(const pushmark list null stub);

sub constant ($op) {
    return 1 unless $op && $$op;
    return 0 unless $CONSTANT{$op->name};
    return 1 unless $op->flags & B::OPf_KIDS;
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        return 0 unless constant($kid);
    }
    return 1;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Lexicals - which my variables an op writes, and where they come from

=head1 SYNOPSIS

    for my $slot (Perennial::Doctor::Lexicals::written($op, $op->name, $cv)) {
        my $outer = Perennial::Doctor::Lexicals::outer_name($cv, $slot);    # a file-level my
    }

=head1 DESCRIPTION

For L<Perennial::Doctor::Static>: the lexical variables an op writes (assignments, C<push>,
C<++>, C<.=>, C<||=>, an element of a C<my %h>), their names, whether a sub's variable comes
from its file (perl's C<PADNAMEt_OUTER>), and whether an assigned value is made of constants.

=cut
