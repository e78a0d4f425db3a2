package Perennial::Doctor::Static;
use v5.36;
use B ();

# What a compiled script's optree shows that staying resident will change (perennial doctor's
# static evidence): the script is compiled as Registry compiles it, then its code and its named
# subs are walked op by op. Each finding is {kind, line, name}; Perennial::Doctor::Findings
# says what it does and how to fix it.

our $PAD;    # The pad of the sub being walked: where a threaded perl keeps an op's GV
our $CV;     # And the sub

my %OP_KIND = (
    exit  => 'exit',
    chdir => 'chdir',
    umask => 'umask',
    flock => 'flock',
);

# $compiled: what Perennial::Executor::Compiler->compile returned; $warnings: what perl said as
# it compiled (its "will not stay shared" among them)
sub findings ($compiled, $warnings, $path) {
    my @found;
    for my $w (@$warnings) {
        push @found, {kind => 'closure', line => $2, name => $1}
            if $w =~ /\AVariable "([^"]+)" will not stay shared at .*? line (\d+)/;
    }
    push @found, {kind => 'taint', line => 1, name => '-T'} if $compiled->{taint};
    my $package = $compiled->{package};
    my @subs    = ([main => $compiled->{code}], _named_subs($package, $path));
    for my $sub (@subs) {
        my $cv = B::svref_2object($sub->[1]);
        local $PAD = [$cv->PADLIST->ARRAYelt(1)->ARRAY];
        local $CV  = $cv;
        _walk($cv->ROOT, $package, \@found, \my $line, $sub->[0] eq 'main' ? 0 : -1);
    }
    my %seen;
    my @sorted = sort { $a->{line} <=> $b->{line} || $a->{kind} cmp $b->{kind} }
        grep { !$seen{"$_->{kind} $_->{line} $_->{name}"}++ } @found;
    return @sorted;
}

# The subs the script's text defines in its package (not those imported into it)
sub _named_subs ($package, $path) {
    my $stash = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the script's own symbol table
        \%{"${package}::"};
    };
    my @subs;
    for my $name (sort keys %$stash) {
        next if $name eq '__perennial_script' || $name =~ /::\z/;
        my $glob = $stash->{$name};
        next unless ref \$glob eq 'GLOB';
        my $code = *{$glob}{CODE} or next;
        my $cv   = B::svref_2object($code);
        next if $cv->XSUB || !${$cv->START} || ($cv->FILE // '') ne $path;
        push @subs, [$name, $code];
    }
    return @subs;
}

# $depth: 2 for a statement of the script's own body, which runs on every request (-1 in a sub)
sub _walk ($op, $package, $found, $line, $depth) {
    return if !$op || !$$op;
    my $name = $op->name;
    $$line = $op->line if $op->isa('B::COP');
    _note($op, $name, $package, $found, $$line // 0, $depth == 2);
    return unless $op->flags & B::OPf_KIDS;
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        _walk($kid, $package, $found, $line, $depth < 0 ? $depth : $depth + 1);
    }
    return;
}

my %GROWS = map { $_ => 1 } qw(push unshift preinc postinc predec postdec);

sub _note ($op, $name, $package, $found, $line, $every_request) {
    if (my $kind = $OP_KIND{$name}) {
        push @$found, {kind => $kind, line => $line, name => $name};
    }
    elsif ($name eq 'match' || $name eq 'qr' || $name eq 'subst') {
        push @$found, {kind => 'regex-o', line => $line, name => "/o"}
            if $op->pmflags & B::PMf_KEEP;
    }
    elsif ($name eq 'open' || $name eq 'sysopen') {
        my $handle = _global_handle($op);
        push @$found, {kind => 'open-handle', line => $line, name => $handle} if $handle;
    }
    elsif ($name eq 'gv') { _exit_call($op, $found, $line) }
    elsif ($name eq 'sassign' || $name eq 'aassign') {
        _assigned($op, $package, $found, $line, $every_request);
    }
    elsif ($GROWS{$name} || _appends($op, $name)) {
        _grown($op, $package, $found, $line);
    }
    return;
}

# $x .= ... (a concat that writes to its first operand)
sub _appends ($op, $name) {
    return ($name eq 'concat' || $name eq 'multiconcat') && $op->flags & B::OPf_STACKED;
}

# exit, once Perennial's CORE::GLOBAL::exit is in place: a call of that sub
sub _exit_call ($op, $found, $line) {
    my $gv = _gv_of($op);
    push @$found, {kind => 'exit', line => $line, name => 'exit'}
        if $gv && $gv->NAME eq 'exit' && $gv->STASH->NAME eq 'CORE::GLOBAL';
    return;
}

# open(FH, ...) or open(our $fh...): the handle of the first argument, when it is a glob
sub _global_handle ($op) {
    my $kid = $op->first;
    $kid = $kid->sibling while $kid && $$kid && $kid->name =~ /\A(?:pushmark|null)\z/;
    return unless $kid && $$kid && $kid->name eq 'gv';
    my $gv   = _gv_of($kid) or return;
    my $name = $gv->NAME;
    return if $name =~ /\A(?:STDIN|STDOUT|STDERR)\z/;
    return $name;
}

# What an assignment writes: %SIG, $0 and the package's own variables
# (a package variable set by a statement of the script's own body is set on every request)
sub _assigned ($op, $package, $found, $line, $every_request) {
    my $target = $op->name eq 'sassign' ? $op->last : $op->last->first;
    for (my $t = $target; $t && $$t; $t = $t->sibling) {
        my ($sigil, $gv) = _variable($t) or next;
        my $name = $gv->NAME;
        my $in   = $gv->STASH->NAME;
        if    ($name eq 'SIG') { push @$found, {kind => 'sig',     line => $line, name => '%SIG'} }
        elsif ($name eq '0')   { push @$found, {kind => 'dollar0', line => $line, name => '$0'} }
        elsif (!$every_request && $in eq $package && $name =~ /\A[A-Za-z_]\w*\z/) {
            push @$found, {kind => 'global', line => $line, name => "$sigil$name"};
        }
        last if $op->name eq 'sassign';
    }
    return;
}

# A package variable added to (push, ++, .=): it grows from one request to the next
sub _grown ($op, $package, $found, $line) {
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        next if $kid->name eq 'pushmark';
        my ($sigil, $gv) = _variable($kid) or next;
        next unless $gv->STASH->NAME eq $package && $gv->NAME =~ /\A[A-Za-z_]\w*\z/;
        push @$found, {kind => 'global', line => $line, name => $sigil . $gv->NAME};
        last;
    }
    return;
}

# The variable an op names, through the null ops perl leaves around it: (sigil, B::GV)
sub _variable ($op) {
    $op = $op->first while $op->name eq 'null' && $op->flags & B::OPf_KIDS;
    my $name = $op->name;
    return _element($op) if $name eq 'multideref';
    if ($name eq 'gvsv') { my $gv = _gv_of($op) or return; return ('$', $gv) }
    my %sigil = (rv2sv => '$', rv2av => '@', rv2hv => '%', helem => '%', aelem => '@');
    my $sigil = $sigil{$name} or return;
    my $kid   = $op->first;
    return unless $kid && $$kid;
    $kid = $kid->first if $kid->name =~ /\A(?:rv2hv|rv2av)\z/ && $kid->flags & B::OPf_KIDS;
    return unless $kid && $$kid && $kid->name eq 'gv';
    my $gv = _gv_of($kid) or return;
    return ($sigil, $gv);
}

# $h{key} and $a[1] of a package variable, as perl compiles them (one multideref op)
sub _element ($op) {
    my ($gv) = grep { ref && $_->isa('B::GV') } $op->aux_list($CV);
    return unless $gv;
    my $sigil = $op->string($CV) =~ /\A\$[\w:]+\[/ ? '@' : '%';
    return ($sigil, $gv);
}

# A gv op's GV, also where perl keeps it in the pad (threaded perls)
sub _gv_of ($op) {
    my $gv = $op->isa('B::PADOP') ? $PAD->[$op->padix] : $op->isa('B::SVOP') ? $op->sv : undef;
    return $gv if $gv && $gv->isa('B::GV');
    return;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Static - what a script's compiled code shows about staying resident

=head1 SYNOPSIS

    my @found = Perennial::Doctor::Static::findings($compiled, \@warnings, $path);
    # ({kind => 'regex-o', line => 12, name => '/o'}, ...)

=head1 DESCRIPTION

Walks the optree of a script compiled as Registry compiles it (the script's body and the subs
its file defines) and reports, with the line: package variables it assigns (C<global>), perl's
"will not stay shared" warnings (C<closure>), C</o> regexes, C<open> of a global handle,
C<flock>, C<exit>, C<chdir>, C<umask>, C<%SIG> and C<$0> assignments, and C<-T>. The meaning
of each, and its fix, are L<Perennial::Doctor::Findings>'.

=cut
