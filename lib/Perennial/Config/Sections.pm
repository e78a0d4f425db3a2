package Perennial::Config::Sections;
use v5.36;
use Exporter qw(import);
use Perennial::Access;
use Perennial::Config::Ignored qw(ignored);
use Perennial::Config::PerDir  qw(per_dir_directive);

# The sections of httpd.conf that apply settings to requests: <Location>, <LocationMatch>,
# <Directory>, <DirectoryMatch>, <Files>, <FilesMatch> (and the `~ regex` forms), with Files
# inside a Directory; and the server-level directives that map URLs to files (Alias,
# ScriptAlias). Each section becomes plain data with how it matches and its settings, in the
# order written; Perennial::Walk merges those a request matches, in Apache's order.

our @EXPORT_OK = qw(section server_directive shadowed);

my %KIND = (
    location       => ['location',  0],
    locationmatch  => ['location',  1],
    directory      => ['directory', 0],
    directorymatch => ['directory', 1],
    files          => ['files',     0],
    filesmatch     => ['files',     1],
);
my %NAME = (location => 'Location', directory => 'Directory', files => 'Files');

# A section and what it holds; Files inside a Directory apply only where that Directory does
sub section ($values, $errors, $item, $within = undef) {
    my $where = "$item->{file} line $item->{line}";
    my $spec  = $KIND{lc $item->{section}};
    if (!$spec) {
        push @$errors, "$where: <$item->{section}> is not supported";
        return;
    }
    my ($kind, $regex) = @$spec;
    my $sec = _matcher($kind, $regex, $item, $errors) or return;
    $sec->{within} = $within if $within;
    state $next = 0;
    $sec->{id} = ++$next;    # Unique across the main server and its virtual hosts
    my $place = $kind eq 'location' && $sec->{match} eq 'prefix' ? 'location' : 'section';
    push @{$values->{sections}}, $sec;

    for my $inner (@{$item->{items}}) {
        if ($inner->{section}) {
            my $inner_kind = $KIND{lc $inner->{section}};
            if ($kind eq 'directory' && !$within && $inner_kind && $inner_kind->[0] eq 'files') {
                section($values, $errors, $inner, $sec);
                next;
            }
            if ($inner->{section} =~ /\ARequire(All|Any|None)\z/i) {
                my $node = _authz_container($inner, lc $1, $errors, 'any');
                push @{$sec->{require}}, $node if $node;
                next;
            }
            push @$errors,
                "$inner->{file} line $inner->{line}: <$inner->{section}> cannot be inside <$item->{section}>";
            next;
        }
        my $err = ignored($values, $inner, 1) // per_dir_directive($sec, $inner, $place)
            // "unknown directive '$inner->{name}' inside <$item->{section}>";
        push @$errors, "$inner->{file} line $inner->{line}: $err" if length $err;
    }
    push @$errors, _handler_errors($sec, "$where: <$item->{section} @{$item->{args}}>");
    return;
}

# <RequireAll>, <RequireAny>, <RequireNone>: Require lines and more of them, nested. As in
# Apache, what can only refuse (a negated Require, a <RequireNone>) must stand in a
# <RequireAll>: among alternatives ($within 'any' or 'none', and a section's own Require lines
# are alternatives) it could never decide anything.
sub _authz_container ($item, $kind, $errors, $within) {
    if ($kind eq 'none' && $within ne 'all') {
        push @$errors, "$item->{file} line $item->{line}: <$item->{section}> has no effect "
            . ($within eq 'any' ? 'outside <RequireAll>' : 'inside <RequireNone>');
        return;
    }
    my @nodes = grep {defined} map { _authz_node($item, $_, $kind, $errors) } @{$item->{items}};
    my $at    = "$item->{file} line $item->{line}: <$item->{section}>";
    return _refused($errors, "$at holds no Require") unless @nodes;

    # As Apache (AH01624): rules that can only refuse, alone, could never let anyone in
    return _refused($errors,
        "$at holds only negative rules (Require not, <RequireNone>), so it could never grant access"
    ) if $kind eq 'all' && !grep { !$_->{not} && !$_->{none_of} } @nodes;
    return {"${kind}_of" => \@nodes};
}

# One thing inside a Require section: a Require line or a Require section, as a node
sub _authz_node ($item, $inner, $kind, $errors) {
    my $at = "$inner->{file} line $inner->{line}";
    if ($inner->{section}) {
        my ($sub) = $inner->{section} =~ /\ARequire(All|Any|None)\z/i
            or return _refused($errors,
            "$at: <$inner->{section}> cannot be inside <$item->{section}>");
        return _authz_container($inner, lc $sub, $errors, $kind);
    }
    return _refused($errors,
        "$at: only Require lines and Require sections go inside <$item->{section}>")
        if lc $inner->{name} ne 'require';
    my $rule = Perennial::Access->parse(@{$inner->{args}});
    return _refused($errors, "$at: $rule") unless ref $rule;
    return _refused($errors, "$at: a negated Require has no effect in <$item->{section}>")
        if $rule->{not} && $kind ne 'all';
    return $rule;
}

# A refusal of the configuration, noted with the others; nothing comes of what was refused
sub _refused ($errors, $message) {
    push @$errors, $message;
    return;
}

# How a section matches: a plain path (Location: whole segments; Directory: it and below), a
# wildcard (* ? [...], never across a /), or a regex (the Match forms, or `~ regex`)
sub _matcher ($kind, $regex, $item, $errors) {
    my @args  = @{$item->{args}};
    my $where = "$item->{file} line $item->{line}";
    if (!$regex && @args == 2 && $args[0] eq '~') { $regex = 1; shift @args }
    if (@args != 1) {
        push @$errors,
            "$where: <$item->{section}> takes one " . ($regex ? 'regular expression' : 'path');
        return;
    }
    my %sec = (kind => $kind, path => $args[0], file => $item->{file}, line => $item->{line});

    # A directory is the same with or without its trailing slash, and // is /
    $sec{path} = $sec{path} =~ s{//+}{/}gr =~ s{(?<=.)/\z}{}r if $kind eq 'directory' && !$regex;
    if ($regex) {
        my $re = eval {qr/$args[0]/} or do {
            push @$errors, "$where: <$item->{section}>: bad regular expression '$args[0]': "
                . ($@ =~ s/ at .*//sr);
            return;
        };
        return {%sec, match => 'regex', re => $re};
    }
    if ($kind ne 'files' && $sec{path} !~ m{\A/}) {
        push @$errors, "$where: <$NAME{$kind}> takes a path starting with /";
        return;
    }
    return {%sec, match => 'prefix'} unless $sec{path} =~ /[*?\[]/;
    return {%sec, match => 'wildcard', re => _wildcard($sec{path}, $kind)};
}

# Apache's fnmatch with FNM_PATHNAME: * and ? never match a /. A Directory wildcard also
# covers what is below the directories it names.
sub _wildcard ($pattern, $kind) {
    my $re = join '', map {
              $_ eq '*'           ? '[^/]*'
            : $_ eq '?'           ? '[^/]'
            : /\A\[(!?)(.*)\]\z/s ? '[' . ($1 ? '^' : '') . $2 . ']'
            : quotemeta
    } $pattern =~ /(\*|\?|\[!?\]?[^\]]*\]|[^*?\[]+|\[)/g;
    return $kind eq 'directory' ? qr{\A$re(?:/|\z)} : qr{\A$re\z};
}

# What a section's SetHandler needs, and where it may be
sub _handler_errors ($sec, $where) {
    my $h     = $sec->{handler} // '';
    my $plain = $sec->{kind} eq 'location' && $sec->{match} eq 'prefix';
    my @errors;
    push @errors, "$where with SetHandler psgi needs PSGIApp" if $h eq 'psgi' && !$sec->{app};
    push @errors, "$where with SetHandler $h needs PerlResponseHandler"
        if ($h eq 'perl-script' || $h eq 'modperl') && !$sec->{response_handler};
    push @errors, "$where: SetHandler $h belongs in a plain <Location>"
        if ($h eq 'psgi' || $h =~ /status\z/) && !$plain;
    return @errors;
}

# A plain <Location> with a handler written after a narrower one with a handler overrides it
# for everything below (Apache merges in the order written, it does not pick the longest
# path): said at start, since a config written for longest-match would change silently
sub shadowed ($sections) {
    my @with = grep { $_->{kind} eq 'location' && $_->{match} eq 'prefix' && defined $_->{handler} }
        @$sections;
    my @notes;
    for my $i (0 .. $#with) {
        for my $later (@with[$i + 1 .. $#with]) {
            my ($narrow, $wide) = ($with[$i]{path}, $later->{path} =~ s{/+\z}{}r);
            next unless length $narrow > length $wide && index($narrow, "$wide/") == 0;
            push @notes,
                  "$later->{file} line $later->{line}: <Location $later->{path}> comes after "
                . "<Location $narrow> ($with[$i]{file} line $with[$i]{line}) and overrides its "
                . "SetHandler below $narrow, as in Apache; write the wider one first";
        }
    }
    return @notes;
}

# Server-level directives of this part of the configuration. Returns undef when the name is
# not one of them, '' when it was read, or the reason it is wrong.
sub server_directive ($values, $item) {
    my $name = lc $item->{name};
    my @args = @{$item->{args}};
    return _alias($values, $item, $name =~ /\Ascript/ ? 1 : 0)
        if $name =~ /\A(?:script)?alias(?:match)?\z/;
    if ($name eq 'perlrequire' || $name eq 'perlpostconfigrequire') {
        return "$item->{name} takes one or more files" unless @args;
        push @{$values->{requires}}, @args;
        return '';
    }
    return _perl_switches($values, $item)   if $name eq 'perlswitches';
    return _extended_status($values, $item) if $name eq 'extendedstatus';
    return per_dir_directive($values->{server_dir} //= {}, $item, 'server');
}

# Alias and ScriptAlias (a URL path and a directory or file), AliasMatch and ScriptAliasMatch
# (a regular expression and an absolute path with $1 ... in it), in the order written
sub _alias ($values, $item, $script) {
    my ($from, $to, @more) = @{$item->{args}};
    my %alias = (dir => $to, script => $script, file => $item->{file}, line => $item->{line});
    if ($item->{name} =~ /match\z/i) {
        return "$item->{name} takes a regular expression and an absolute path"
            if @more || !defined $to || $to !~ m{\A/};
        $alias{re} = eval {qr/$from/}
            or return "$item->{name}: bad regular expression '$from': " . ($@ =~ s/ at .*//sr);
        $alias{pattern} = $from;
    }
    else {
        return "$item->{name} takes a URL path and a directory"
            if @more || !defined $to || $from !~ m{\A/};
        $alias{url} = $from;
    }
    push @{$values->{aliases}}, \%alias;
    return '';
}

# PerlSwitches: -I DIR (or -IDIR) adds to @INC, -w turns warnings on everywhere, -T is said
# to have no effect (taint mode is the whole interpreter's, set when perl starts)
sub _perl_switches ($values, $item) {
    my @args = @{$item->{args}};
    while (@args) {
        my $switch = shift @args;
        if ($switch =~ /\A-I(.*)\z/) {
            my $dir = length $1 ? $1 : shift(@args) // return 'PerlSwitches -I needs a directory';
            push @{$values->{includes}}, $dir;
        }
        elsif ($switch eq '-w') { $values->{perl_warnings} = 1 }
        elsif ($switch eq '-T' || $switch eq '-t') {
            push @{$values->{notes}},
                "$item->{file} line $item->{line}: PerlSwitches $switch ignored: "
                . 'taint mode belongs to the whole interpreter, chosen when perl starts';
        }
        else { return "PerlSwitches $switch is not supported (-I DIR, -w, -T)" }
    }
    return '';
}

sub _extended_status ($values, $item) {
    my @args = @{$item->{args}};
    return 'ExtendedStatus must be On or Off' if @args != 1 || $args[0] !~ /\A(?:on|off)\z/i;
    push @{$values->{notes}},
        "$item->{file} line $item->{line}: ExtendedStatus Off ignored: "
        . 'the per-worker figures cost no system call and are always kept'
        if lc $args[0] eq 'off';
    return '';
}

1;

__END__

=head1 NAME

Perennial::Config::Sections - <Location>, <Directory>, <Files>, their Match forms, and Alias

=head1 SYNOPSIS

    use Perennial::Config::Sections qw(section server_directive);
    section(\%values, \@errors, $item) if $item->{section};

=head1 DESCRIPTION

Reads the sections of an httpd.conf into plain data, in the order written: C<< <Location> >>,
C<< <LocationMatch> >>, C<< <Directory> >>, C<< <DirectoryMatch> >>, C<< <Files> >>,
C<< <FilesMatch> >>, and C<< <Location ~ "regex"> >>, C<< <Directory ~ "regex"> >>,
C<< <Files ~ "regex"> >>. C<< <Files> >> may stand inside a C<< <Directory> >>. A path with
C<*>, C<?> or C<[...]> is a wildcard (never matching across a C</>). Their directives are
read by L<Perennial::Config::PerDir>; L<Perennial::Walk> merges them per request.

At server level it reads C<Alias>, C<ScriptAlias>, C<PerlRequire>, C<PerlPostConfigRequire>,
C<PerlSwitches> (C<-I DIR>, C<-w>; C<-T> is noted), C<ExtendedStatus> and the
per-directory directives that make the base of every merge.

=head1 FUNCTIONS

=head2 section

    section(\%values, \@errors, $item);

=head2 shadowed

    $log->warn($_) for shadowed($config->sections);

Notes for each plain C<< <Location> >> with a handler that comes after a narrower one it
therefore overrides.

=head2 server_directive

    my $err = server_directive(\%values, $item);    # undef: not one of these

=cut
