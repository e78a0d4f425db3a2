package Perennial::Config::Conditional;
use v5.36;
use Exporter   qw(import);
use File::Glob ();
use File::Spec ();
use Perennial::Config::Apache;

# What Apache settles while it reads the files, before any directive means anything:
# <IfModule>, <IfDefine> and <IfVersion> keep or drop what they hold, Define sets a name (and a
# ${NAME} to put in later lines), ${NAME} also reads the environment, and Include /
# IncludeOptional put other files in place, wildcards sorted as Apache sorts them. The result is
# the same kind of item list Perennial::Config::Apache makes, with every item's file and line.

our @EXPORT_OK = qw(expand);

# Apache's version, as <IfVersion> sees it: the 2.4 whose configuration Perennial reads
my $APACHE_VERSION = '2.4.71';

# Apache modules whose directives Perennial reads, by their base name (mod_NAME.c, NAME_module).
# The prefork MPM is what Perennial is; every other module is absent.
my %MODULES = map { $_ => 1 } qw(perl mpm_prefork prefork cgi alias mime status dir authz_core
    authz_host authn_core env log_config version so unixd remoteip access_compat auth_basic
    authn_file);

my $MAX_DEPTH = 8;

# Is an Apache module (mod_perl.c, perl_module, mod_cgi) one whose work Perennial does?
sub module_loaded ($name) {
    return $MODULES{lc($name) =~ s/\Amod_//r =~ s/\.c\z//r =~ s/_module\z//r} ? 1 : 0;
}

# Each test returns 1 or 0, or why it cannot say
my %COND = (
    ifmodule => sub ($args, $ctx) {
        return if @$args != 1;
        my ($not, $module) = $args->[0] =~ /\A(!?)(.+)\z/;
        return module_loaded($module) ^ ($not ? 1 : 0);
    },
    ifdefine => sub ($args, $ctx) {
        return if @$args != 1;
        my ($not, $name) = $args->[0] =~ /\A(!?)(.+)\z/;
        return (exists $ctx->{defines}{$name} ? 1 : 0) ^ ($not ? 1 : 0);
    },
    ifversion => \&_if_version,
);

# The items with every conditional section settled and every Include read. $ctx holds the
# defines (name => value), the server root for relative Include paths, and the notes to log.
sub expand ($items, $errors, $ctx, $depth = 0) {
    my @out;
    for my $item (@$items) {
        _substitute($item, $ctx);
        push @out, $item->{section}
            ? _section($item, $errors, $ctx, $depth)
            : _directive($item, $errors, $ctx, $depth);
    }
    return \@out;
}

# A conditional section gives what it holds, or nothing; any other, itself with its contents
# settled
sub _section ($item, $errors, $ctx, $depth) {
    my $kind = $item->{section};
    my $test = $COND{lc $kind}
        or return {%$item, items => expand($item->{items}, $errors, $ctx, $depth)};
    my $holds = $test->($item->{args}, $ctx);
    if (!defined $holds || $holds !~ /\A[01]\z/) {
        push @$errors,
            "$item->{file} line $item->{line}: <$kind> " . ($holds // 'takes one argument');
        return;
    }
    return $holds ? @{expand($item->{items}, $errors, $ctx, $depth)} : ();
}

sub _directive ($item, $errors, $ctx, $depth) {
    my $name = lc $item->{name};
    return _include($item, $errors, $ctx, $depth)
        if $name eq 'include' || $name eq 'includeoptional';
    return _define($item, $errors, $ctx) if $name eq 'define' || $name eq 'undefine';
    $ctx->{server_root} = File::Spec->rel2abs($item->{args}[0], $ctx->{server_root})
        if $name eq 'serverroot' && @{$item->{args}} == 1;
    return $item;
}

sub _define ($item, $errors, $ctx) {
    my $define = lc $item->{name} eq 'define';
    my ($var, $value) = @{$item->{args}};
    if (!defined $var || @{$item->{args}} > ($define ? 2 : 1)) {
        push @$errors, "$item->{file} line $item->{line}: $item->{name} takes a name"
            . ($define ? ' and an optional value' : '');
        return;
    }
    if ($define) { $ctx->{defines}{$var} = $value // '' }
    else         { delete $ctx->{defines}{$var} }
    return;
}

# <IfVersion [[!]op] version>: op is = == > >= < <= or ~ (a regex), /regex/ alone too
sub _if_version ($args, $ctx) {
    my @args = @$args;
    return 'takes [[!]operator] version' if !@args || @args > 2;
    my ($not, $op) = (0, '=');
    if (@args == 2) {
        ($not, $op) = $args[0] =~ /\A(!?)(=|==|>|>=|<|<=|~)\z/
            or return "unknown operator '$args[0]'";
    }
    my $want = $args[-1];
    $not = 1 if @args == 1 && $want =~ s/\A!//;
    my $holds
        = $op eq '~'                   ? _version_like($want)
        : $want =~ m{\A/(.*)/\z}       ? _version_like($1)
        : $want =~ /\A\d+(?:\.\d+)*\z/ ? _version_is($op, $want)
        :                                return "'$want' is not a version";
    return $holds if $holds !~ /\A[01]\z/;
    return $holds ^ ($not ? 1 : 0);
}

sub _version_like ($re) {
    return eval { $APACHE_VERSION =~ /$re/ ? 1 : 0 } // "bad regex '$re'";
}

# major[.minor[.patch]], the parts not given 0, as mod_version: 2.4 is 2.4.0, so `> 2.4` holds
# for 2.4.71 and `= 2.4` does not
sub _version_is ($op, $want) {
    my @have = split /\./, $APACHE_VERSION;
    my @need = split /\./, $want;
    my $cmp  = 0;
    for my $i (0 .. 2) { $cmp ||= ($have[$i] // 0) <=> ($need[$i] // 0) }
    my %holds = (
        '='  => $cmp == 0,
        '==' => $cmp == 0,
        '>'  => $cmp > 0,
        '>=' => $cmp >= 0,
        '<'  => $cmp < 0,
        '<=' => $cmp <= 0
    );
    return $holds{$op} ? 1 : 0;
}

# Include FILE|DIR|WILDCARD, relative to ServerRoot as Apache's; IncludeOptional is quiet
# about a wildcard that matches nothing or a file that is not there
sub _include ($item, $errors, $ctx, $depth) {
    my $where = "$item->{file} line $item->{line}";
    my $error = sub ($msg) { push @$errors, "$where: $msg"; return };
    return $error->("$item->{name} takes one path")                   if @{$item->{args}} != 1;
    return $error->("$item->{name} nested more than $MAX_DEPTH deep") if $depth >= $MAX_DEPTH;
    my $path = File::Spec->rel2abs($item->{args}[0], $ctx->{server_root});
    my ($files, $missing) = _files_of($path);
    return $error->("$item->{name}: $missing") if $missing && lc $item->{name} eq 'include';
    my @out;

    for my $file (@$files) {
        my ($items, $syntax) = Perennial::Config::Apache->parse_file($file);
        push @$errors, @$syntax;
        push @out,     @{expand($items, $errors, $ctx, $depth + 1)};
    }
    return @out;
}

# The files a path names (a wildcard's matches, which may stand in directories too, as Apache
# 2.4 allows; a directory's files and those of its subdirectories, as Apache reads them; or a
# file), sorted; and what is wrong when there are none
sub _files_of ($path) {
    if ($path =~ /[*?\[]/) {
        my @files = sort grep {-f} File::Glob::bsd_glob($path, File::Glob::GLOB_NOSORT());
        return (\@files, @files ? undef : "no file matches '$path'");
    }
    return ([$path], undef) if -f $path;
    return ([],      "file '$path' not found") unless -d $path;
    opendir(my $dh, $path) or return ([], "Can't read directory '$path': $!");
    my @files;
    for my $entry (sort grep { !/\A\./ } readdir $dh) {    # Not . and .., nor an editor's .swp
        my ($below, $err) = -d "$path/$entry" ? _files_of("$path/$entry") : (["$path/$entry"]);
        return ([], $err) if $err;
        push @files, @$below;
    }
    return (\@files, undef);
}

# ${NAME} in arguments: a Define'd value, else the environment's, else left as written (and
# noted), as Apache does
sub _substitute ($item, $ctx) {
    for my $arg (@{$item->{args}}) {
        next if index($arg, '${') < 0;
        $arg =~ s{\$\{(\w+)\}}{
            exists $ctx->{defines}{$1} ? $ctx->{defines}{$1}
            : defined $ctx->{env}{$1}  ? $ctx->{env}{$1}
            : do { push @{$ctx->{notes}}, "$item->{file} line $item->{line}: config variable \${$1} is not defined"; "\${$1}" }
        }ge;
    }
}

1;

__END__

=head1 NAME

Perennial::Config::Conditional - IfModule, IfDefine, IfVersion, Define and Include, as Apache reads them

=head1 SYNOPSIS

    my $ctx   = {defines => {SSL => ''}, env => \%ENV, server_root => '/etc/apache2', notes => []};
    my $items = expand($parsed_items, \@errors, $ctx);

=head1 DESCRIPTION

Settles what Apache settles while it reads its files. C<< <IfModule [!]name> >> holds for the
modules whose directives Perennial reads (C<mod_perl.c>/C<perl_module>, the prefork MPM,
C<mod_cgi.c>, C<mod_alias.c>, C<mod_mime.c>, C<mod_status.c>, C<mod_dir.c>, C<mod_env.c>,
C<mod_log_config.c>, C<mod_authz_core.c>, C<mod_authz_host.c>, C<mod_version.c>, ...) and
not for any other. C<< <IfDefine [!]NAME> >> tests names given with C<-D NAME> or C<Define>.
C<< <IfVersion> >> compares with Apache 2.4.71 (Debian 12's). C<${NAME}> in an argument is a C<Define>d value
or an environment variable. C<Include> and C<IncludeOptional> take a file, a directory or a
wildcard, relative to C<ServerRoot>, and read the matches in sorted order.

=head1 FUNCTIONS

=head2 expand

    my $items = expand($items, \@errors, $ctx);

=cut
