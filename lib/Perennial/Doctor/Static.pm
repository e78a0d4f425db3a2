package Perennial::Doctor::Static;
use v5.36;
use B ();
use Perennial::Doctor::Lexicals;
use Perennial::Doctor::Ops;
use Perennial::Executor::Exit ();    # Its CORE::GLOBAL::exit, in place as the server has it

# What a compiled script's optree shows that staying resident will change (perennial doctor's
# static evidence): the script is compiled as Registry compiles it, then its code and its named
# subs are walked op by op. Each finding is {kind, line, name}; Perennial::Doctor::Findings
# says what it does and how to fix it. A library the script requires by a constant name is
# compiled the same way without being run, and its named subs are walked too: a file-level my
# that they change keeps its value from one request to the next.

my %OP_KIND = (
    exit  => 'hard-exit',    # CORE::exit: a plain exit calls Perennial's CORE::GLOBAL::exit
    chdir => 'chdir',
    umask => 'umask',
);

# $compiled: what Perennial::Executor::Compiler->compile returned; $warnings: what perl said as
# it compiled (its "will not stay shared" among them). $library: the file is one a script
# requires, not the script. Returns {found => the findings, dismissed => those the whole file
# shows to be harmless, requires => the names it requires with a constant (`require
# "./lib.pl"`; a `use` has run and left no op), relative => those by a relative path, fields =>
# its form's field names}.
sub findings ($compiled, $warnings, $path, $library = 0) {
    my $x = {
        package  => $compiled->{package},
        packages => {map { $_ => 1 } $compiled->{package}, @{$compiled->{packages} // []}},
        found    => [],
        requires => [],
        fields   => [],
        library  => $library,
        reset    => {},    # Package variables set by a statement run on every request
        closed   => {},    # Global handles closed
        pad      => {},    # The script's file-level my variables: 'constant' or 'changed'
    };
    for my $w ($library ? () : @$warnings) {
        push @{$x->{found}}, {kind => 'closure', line => $2 + 0, name => $1}
            if $w =~ /\AVariable "([^"]+)" will not stay shared at \Q$path\E line (\d+)/;
    }
    push @{$x->{found}}, {kind => 'taint', line => 1, name => '-T'}
        if $compiled->{taint} && !$library;
    my @subs = ([main => $compiled->{code}], _named_subs($x->{package}, $path));
    for my $sub (@subs) {
        my $cv = B::svref_2object($sub->[1]);
        local $Perennial::Doctor::Ops::PAD = [$cv->PADLIST->ARRAYelt(1)->ARRAY];
        local $Perennial::Doctor::Ops::CV  = $cv;
        _walk($cv->ROOT, $x, \my $line, $sub->[0] eq 'main' ? 0 : -1);
    }
    my (%first, %field);
    my @unique = grep { _once(\%first, $_) } @{$x->{found}};
    return {
        found => [
            sort { $a->{line} <=> $b->{line} || $a->{kind} cmp $b->{kind} }
            grep { !_harmless($x, $_) } @unique
        ],
        dismissed => [grep { _harmless($x, $_) } @unique],
        requires  => $x->{requires},
        fields    => [grep { !$field{$_}++ } @{$x->{fields}}],
        relative  => $x->{relative} // [],
    };
}

# One finding for a variable, at its first line, with the others (%session set on three lines)
# (each /o regex is its own: one may interpolate, another not)
sub _once ($first, $f) {
    my $key  = join ' ', $f->{kind}, $f->{kind} eq 'regex-o' ? $f->{line} : $f->{name};
    my $seen = $first->{$key};
    if (!$seen) { $first->{$key} = $f; return 1 }
    push @{$seen->{lines} //= [$seen->{line}]}, $f->{line}
        unless $f->{line} == $seen->{line} || grep { $_ == $f->{line} } @{$seen->{lines} // []};
    return 0;
}

# What the whole file shows to be harmless: a global the script also sets on every request
# (`@items = ();` before `push @items`), a global handle it closes, a file-level my that is
# only ever given constants (perl says it "will not stay shared", but every request's value is
# the same), a /o on a pattern with nothing to interpolate
sub _harmless ($x, $f) {
    my $kind = $f->{kind};
    return $x->{reset}{$f->{name}}                     if $kind eq 'global';
    return $x->{closed}{$f->{name}}                    if $kind eq 'open-handle';
    return $x->{closed}{$f->{name}}                    if $kind eq 'flock';
    return ($x->{pad}{$f->{name}} // '') eq 'constant' if $kind eq 'closure';
    return !$x->{interpolated}{$f->{line}}             if $kind eq 'regex-o';
    return 0;
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
# Ops whose kids run only sometimes (not the test of a loop, which is an `and` under the loop)
my %CONDITION = map { $_ => 1 } qw(and or dor xor cond_expr andassign orassign dorassign);

# ($x->{cond}: below an if, unless, ?: or the like, a statement may not run on a request; the
# body of a loop counts as run)
sub _walk ($op, $x, $line, $depth) {
    return if !$op || !$$op;
    my $name = $op->name;
    $$line = $op->line if $op->isa('B::COP');
    _note($op, $name, $x, $$line // 0, $depth);
    return unless $op->flags & B::OPf_KIDS;
    my $next = $depth < 0 ? $depth : $depth + 1;
    local $x->{cond} = $x->{cond}           || $CONDITION{$name} && !$x->{loop};
    local $x->{loop} = $name eq 'leaveloop' || ($x->{loop} && $name eq 'null');

    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        _walk($kid, $x, $line, $next);
    }
    return;
}

# Ops that add to a variable, or set it only when it has no value yet ($x ||= ...)
my %GROWS = map { $_ => 1 } qw(push unshift preinc postinc predec postdec orassign dorassign);

# What each kind of op can show: ($op, $x, $line, $depth)
my %NOTE = (
    (   map {
            my ($kind, $name) = ($OP_KIND{$_}, $_ eq 'exit' ? 'CORE::exit' : $_);
            $_ => sub { _found($_[1], $kind, $_[2], $name) }
        } keys %OP_KIND
    ),
    (map { $_ => \&_regex } qw(match qr subst)),
    (map { $_ => \&_opened } qw(open sysopen open_dir)),
    close    => \&_closed,
    closedir => \&_closed,
    flock    => \&_flock,
    gv       => sub ($op, $x, $line, $depth) { _exit_call($op, $x->{found}, $line) },
    require  => \&_required,
    entersub => sub ($op, $x, $line, $depth) { _form_field($op, $x->{fields}) },
    (map { $_ => \&_assigned } qw(sassign aassign)),
    undef => \&_undone,
);

sub _note ($op, $name, $x, $line, $depth) {
    if ($x->{library}) { _kept_lexical($op, $name, $x->{found}, $line) if $depth < 0 }
    else               { _file_lexicals($op, $name, $x, $depth) }
    if    (my $note = $NOTE{$name}) { $note->($op, $x, $line, $depth) }
    elsif (($GROWS{$name} || _appends($op, $name)) && !($x->{library} && $depth >= 0)) {
        _grown($op, $x, $line);
    }
    return;
}

sub _found ($x, $kind, $line, $name) {
    push @{$x->{found}}, {kind => $kind, line => $line, name => $name};
    return;
}

# /o matters only for a pattern that interpolates a variable (a regcomp op below the match)
sub _regex ($op, $x, $line, $depth) {
    return unless $op->pmflags & B::PMf_KEEP;
    _found($x, 'regex-o', $line, '/o');
    $x->{interpolated}{$line} = 1 if Perennial::Doctor::Ops::has($op, 'regcomp');
    return;
}

sub _closed ($op, $x, $line, $depth) {
    my $handle = Perennial::Doctor::Ops::global_handle($op);
    $x->{closed}{$handle} = 1 if $handle;
    return;
}

# flock of a global handle (a lexical one lets go at the end of the request)
sub _flock ($op, $x, $line, $depth) {
    my $handle = Perennial::Doctor::Ops::global_handle($op);
    _found($x, 'flock', $line, $handle) if $handle;
    return;
}

sub _opened ($op, $x, $line, $depth) {
    my $handle = Perennial::Doctor::Ops::global_handle($op);
    _found($x, 'open-handle', $line, $handle) if $handle;
    return;
}

# Whether a statement runs each time its file runs: a statement of the script's own body that no
# condition guards (each request), anything in a library's body (each time it loads, once per
# compile)
sub _each_time ($x, $depth) { $depth >= 0 && ($x->{library} || !$x->{cond}) }

# require "lib.pl" and require Some::Module: the name, when it is a constant
# (one by a path relative to the working directory, ./lib.pl, is noted with its line: whether it
# is found depends on the handler)
sub _required ($op, $x, $line, $depth) {
    return unless $op->flags & B::OPf_KIDS;
    my $kid = $op->first;
    return unless $kid->name eq 'const';
    my $name = Perennial::Doctor::Ops::string($kid, $kid->sv);
    return unless defined $name && length $name && $name !~ /\Av?[\d.]+\z/;
    push @{$x->{requires}}, $name;
    push @{$x->{relative}}, {kind => 'relative-require', line => $line, name => $name}
        if $name =~ m{\A\.\.?/};
    return;
}

# CGI.pm's param('name') and $q->param('name'): the form's field names, for the requests of
# perennial doctor --run
my %FORM = map { $_ => 1 } qw(param multi_param url_param upload);

sub _form_field ($op, $fields) {
    my @kids = Perennial::Doctor::Ops::kids($op);
    @kids = Perennial::Doctor::Ops::kids($kids[0]) if @kids == 1 && $kids[0]->name eq 'null';
    my $callee = pop @kids or return;
    my $name
        = $callee->name eq 'method_named'
        ? Perennial::Doctor::Ops::string($callee, $callee->meth_sv)
        : $callee->name eq 'null'
        && $callee->flags & B::OPf_KIDS ? Perennial::Doctor::Ops::gv_name($callee->first)
        : undef;
    return unless $name && $FORM{$name};
    my ($field)
        = map { Perennial::Doctor::Ops::string($_, $_->sv) } grep { $_->name eq 'const' } @kids;
    push @$fields, $field if defined $field && $field =~ /\A\w[\w.-]*\z/;
    return;
}

# A library's named sub that changes a file-level my (which keeps its value from one request to
# the next); the script's own file-level my variables, as it writes them
sub _kept_lexical ($op, $name, $found, $line) {
    push @$found,
        map { +{kind => 'lib-state', line => $line, name => $_} }
        Perennial::Doctor::Lexicals::kept($op, $name, $Perennial::Doctor::Ops::CV);
    return;
}

sub _file_lexicals ($op, $name, $x, $depth) {
    Perennial::Doctor::Lexicals::note_file_lexicals($op, $name, $Perennial::Doctor::Ops::CV,
        $depth >= 0,
        $x->{pad});
    return;
}

# $x .= ... (a concat that writes to its first operand)
sub _appends ($op, $name) { Perennial::Doctor::Lexicals::appends($op, $name) }

# exit, once Perennial's CORE::GLOBAL::exit is in place: a call of that sub; and POSIX::_exit
sub _exit_call ($op, $found, $line) {
    my $gv = Perennial::Doctor::Ops::gv_of($op) or return;
    my ($name, $in) = ($gv->NAME, $gv->STASH->NAME);
    push @$found, {kind => 'exit', line => $line, name => 'exit'}
        if $name eq 'exit' && $in eq 'CORE::GLOBAL';
    push @$found, {kind => 'hard-exit', line => $line, name => 'POSIX::_exit'}
        if $name eq '_exit' && $in eq 'POSIX';
    return;
}

# What an assignment writes: %SIG, $0 and the package's own variables
# (a package variable set by a statement that runs each time is set on every request)
sub _assigned ($op, $x, $line, $depth) {
    my ($found, $each_time) = ($x->{found}, _each_time($x, $depth));
    return unless $op->isa('B::BINOP');    # The sassign of $x ||= ... has its target above it
    my $target = $op->name eq 'sassign' ? $op->last : $op->last->first;
    for (my $t = $target; $t && $$t; $t = $t->sibling) {
        my ($sigil, $gv, $element) = Perennial::Doctor::Ops::variable($t) or next;
        my $name = $gv->NAME;
        if    ($name eq 'SIG') { push @$found, {kind => 'sig',     line => $line, name => '%SIG'} }
        elsif ($name eq '0')   { push @$found, {kind => 'dollar0', line => $line, name => '$0'} }
        elsif (_own($x, $gv)) {

            # $in{$key} = ... adds to %in, whenever it runs; %in = () sets it anew
            if ($each_time && !$element) { $x->{reset}{"$sigil$name"} = 1 }
            else                         { _found($x, 'global', $line, "$sigil$name") }
        }
        last if $op->name eq 'sassign';
    }
    return;
}

# A package variable added to (push, ++, .=, ||=): it grows from one request to the next
sub _grown ($op, $x, $line) {
    for (my $kid = $op->first; $kid && $$kid; $kid = $kid->sibling) {
        next if $kid->name eq 'pushmark';
        my ($sigil, $gv) = Perennial::Doctor::Ops::variable($kid) or next;
        _found($x, 'global', $line, $sigil . $gv->NAME) if _own($x, $gv);
        last;
    }
    return;
}

# undef @list, undef %seen, undef $x on every request: set anew
sub _undone ($op, $x, $line, $depth) {
    return unless _each_time($x, $depth) && $op->flags & B::OPf_KIDS;
    my ($sigil, $gv, $element) = Perennial::Doctor::Ops::variable($op->first) or return;
    $x->{reset}{$sigil . $gv->NAME} = 1 if !$element && _own($x, $gv);
    return;
}

# A variable of the script's package, or of one its text declares (package FormMail;)
sub _own ($x, $gv) {
    return $x->{packages}{$gv->STASH->NAME} && $gv->NAME =~ /\A[A-Za-z_]\w*\z/;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Static - what a script's compiled code shows about staying resident

=head1 SYNOPSIS

    my $seen = Perennial::Doctor::Static::findings($compiled, \@warnings, $path);
    # {found => [{kind => 'regex-o', line => 12, name => '/o'}, ...], requires => ['./lib.pl'], ...}

=head1 DESCRIPTION

Walks the optree of a script compiled as Registry compiles it (the script's body and the subs
its file defines) and reports, with the line: package variables it assigns (C<global>), perl's
"will not stay shared" warnings (C<closure>), C</o> regexes, C<open> of a global handle,
C<flock>, C<exit>, C<chdir>, C<umask>, C<%SIG> and C<$0> assignments, and C<-T>; and the
names it requires with a constant. Walking a library the script requires (the fourth argument
true), it reports the library's file-level C<my> variables that its subs change
(C<lib-state>). The meaning of each, and its fix, are L<Perennial::Doctor::Findings>'.

=cut
