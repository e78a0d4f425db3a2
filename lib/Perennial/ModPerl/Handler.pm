package Perennial::ModPerl::Handler;
use v5.36;
use attributes           ();
use Perennial::ErrorText qw(error_text);

# A handler named in the configuration (PerlResponseHandler, PerlAccessHandler, ...,
# PerlChildInitHandler), found as mod_perl 2 finds it: "My::Module" is My::Module::handler
# (inherited too), "My::Module::name" is that sub, "My::Module->name" is a method called on
# the class; a sub with the `method` attribute is called as a method as well. Modules are
# loaded the first time a name is resolved, which is at start, in the manager, so that
# workers share them. Resolved names are kept.

my $NAME = qr/\A[A-Za-z_]\w*(?:::\w+)*\z/;

# Resolved names. A package variable: Perennial::ModPerl::Phases::run reads it without a call
# (known's call was 1.5k instructions a handler); only this module writes it.
our %RESOLVED;

# Whether a name could be a handler at all (for the configuration reader)
sub is_name ($class, $name) {
    my ($module, $method) = split /->/, $name, 2;
    return 0 unless $module =~ $NAME;
    return !defined $method || $method =~ /\A[A-Za-z_]\w*\z/ ? 1 : 0;
}

# {name, code, class (for a method)}, or dies saying why the name leads nowhere
sub resolve ($class, $name) {
    return $RESOLVED{$name} //= _find($name);
}

# Forgets what names led to (the modules were loaded again, at a graceful restart)
sub forget ($class) { %RESOLVED = (); return }

# Runs a resolved handler with the arguments; its return value
sub call ($class, $handler, @args) {
    return $handler->{code}->(arguments($handler, @args));
}

# The arguments a resolved handler is called with: a method handler's class first
sub arguments ($handler, @args) {
    return defined $handler->{class} ? ($handler->{class}, @args) : @args;
}

sub _find ($name) {
    die "'$name' is not a Perl sub or module name\n" unless __PACKAGE__->is_name($name);
    if (my ($module, $method) = $name =~ /\A(.+)->(\w+)\z/) {
        _load($module);
        my $code = $module->can($method) or die "no method $method in $module\n";
        return {name => $name, code => $code, class => $module};
    }
    my $found = _load($name);
    if (my $code = $name->can('handler')) {
        return {name => $name, code => $code, _method($code) ? (class => $name) : ()};
    }
    my ($module, $sub) = $name =~ /\A(.+)::(\w+)\z/
        or die "no sub ${name}::handler is loaded" . ($found ? '' : _not_found($name)) . "\n";
    $found = _load($module) || $found;
    no strict 'refs';    ## no critic (ProhibitNoStrict) a sub named in the configuration
    my $code = defined &{$name} ? \&{$name} : undef;
    die "no sub ${name}::handler or $name is loaded"
        . ($found ? '' : _not_found($name, $module)) . "\n"
        unless $code;
    return {name => $name, code => $code, _method($code) ? (class => $module) : ()};
}

sub _not_found (@modules) {
    my @files = map { ($_ =~ s{::}{/}gr) . '.pm' } @modules;
    return @files == 1
        ? " ($files[0] is not in \@INC)"
        : " (neither @{[join ' nor ', @files]} is in \@INC)";
}

# Loads a module unless it is loaded or has subs already (defined in another file): whether it
# is there; a module that is there and does not load dies with its error
sub _load ($module) {
    my $file = ($module =~ s{::}{/}gr) . '.pm';
    return 1 if $INC{$file};
    {
        no strict 'refs';    ## no critic (ProhibitNoStrict) is anything defined in the package
        return 1 if grep { defined &{"${module}::$_"} } keys %{"${module}::"};
    }
    return 1 if eval { require $file; 1 };
    my $err = error_text($@);
    return 0 if $err =~ /\ACan't locate \Q$file\E in \@INC/;
    my $why = $err =~ s/\s*Compilation failed in require at \Q${\__FILE__}\E line \d+\.\z//r;
    die "$module does not load: $why\n";
}

sub _method ($code) {
    (grep { $_ eq 'method' } attributes::get($code)) ? 1 : 0;
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Handler - find and call a handler named as mod_perl names them

=head1 SYNOPSIS

    my $handler = Perennial::ModPerl::Handler->resolve('My::App');    # My::App::handler
    my $rc      = Perennial::ModPerl::Handler->call($handler, $r);

=head1 DESCRIPTION

C<My::Module> is C<My::Module::handler> (found through C<@ISA> too), C<My::Module::name> is
that sub, C<< My::Module->name >> is a method called on the class (C<< My::Module->name($r) >>),
and a sub declared C<sub handler : method> is called as a class method, as mod_perl 2 does.
The module is loaded when the name is first resolved; a name that leads to no sub dies with
the reason (the module's own compile error when there is one). Resolved names are kept for
the life of the process.

=head1 METHODS

=head2 call

    my $rc = Perennial::ModPerl::Handler->call($handler, @arguments);

=head2 arguments

    my @args = Perennial::ModPerl::Handler::arguments($handler, $r);    # (class, $r) for a method

=head2 forget

    Perennial::ModPerl::Handler->forget;

=head2 is_name

    my $ok = Perennial::ModPerl::Handler->is_name('My::App->run');

=head2 resolve

    my $handler = Perennial::ModPerl::Handler->resolve($name);    # {name, code, class}

=cut
