package Perennial::Dispatch::Files;
use v5.36;
use Perennial::Executor::Resolver;

# Where a URL path leads on disk, as Apache's translate_name and map_to_storage: the first
# Alias or ScriptAlias that covers it (in the order written), else DocumentRoot; then the file
# below that root, found by one Perennial::Executor::Resolver per root and check policy, with
# the symlink policy of the <Directory> sections of each directory on the way.

sub new ($class, %args) {
    my $n    = 0;
    my $self = bless {
        walk  => $args{walk},
        roots => [
            map {
                {   url    => $_->{url} =~ s{/+\z}{}r,
                    slash  => $_->{url} =~ m{.+/\z} ? 1 : 0,
                    dir    => $_->{dir} =~ s{/+\z}{}r,
                    script => $_->{script},
                    id     => ++$n
                }
            } @{$args{aliases} // []}
        ],
        finders => {},
    }, $class;
    $self->{docroot} = {url => '', dir => $args{document_root} =~ s{/+\z}{}r, script => 0, id => 0}
        if defined $args{document_root};
    return $self;
}

# Each Alias and ScriptAlias, and DocumentRoot
sub roots ($self) { (@{$self->{roots}}, $self->{docroot} // ()) }

# mod_alias: (root, the path below it), or nothing when no root covers the URL path
sub translate ($self, $url) {
    for my $root (@{$self->{roots}}) {
        my $p = $root->{url};
        next unless index($url, $p) == 0;

        # Whole segments; an Alias written with a trailing slash needs it in the URL too
        next if length $url == length $p ? $root->{slash} : substr($url, length $p, 1) ne '/';
        return ($root, substr $url, length $p);
    }
    return ($self->{docroot}, $url) if $self->{docroot};
    return;
}

# The finder of a root, for the check policy of the sections ('always', 'never', seconds)
sub finder ($self, $root, $check) {
    return $self->{finders}{"$root->{id}|$check"} //= Perennial::Executor::Resolver->new(
        root        => $root->{dir},
        check       => $check,
        directories => 1,
        symlinks    => sub ($dir) { $self->_symlinks($dir) }
    );
}

# What is at $rest below $root: a file's hit, a directory, {status => 403, why} or 404
sub find ($class, $finder, $root, $rest, $env) {
    my $hit = $finder->resolve($env, $rest, ($env->{SCRIPT_NAME} // '') . $root->{url});
    return ref $hit || $hit != 403 ? $hit : {status => 403, why => $finder->why};
}

# What the <Directory> sections of a directory say of symlinks in it
sub _symlinks ($self, $dir) {
    my $walk    = $self->{walk};
    my $options = $walk->merged($walk->matching('', $dir, undef, []))->{options};
    return
          $options->{FollowSymLinks}       ? 'follow'
        : $options->{SymLinksIfOwnerMatch} ? 'owner'
        :                                    'none';
}

1;

__END__

=head1 NAME

Perennial::Dispatch::Files - where a URL path leads on disk: Alias, ScriptAlias, DocumentRoot

=head1 SYNOPSIS

    my $files = Perennial::Dispatch::Files->new(
        aliases => $config->aliases, document_root => $config->document_root, walk => $walk);
    my ($root, $rest) = $files->translate('/cgi-bin/app.pl/x') or return 404;
    my $finder = $files->finder($root, 'always');
    my $hit    = Perennial::Dispatch::Files->find($finder, $root, $rest, $env);

=head1 DESCRIPTION

Translates a URL path as mod_alias does (the first C<Alias> or C<ScriptAlias> whose URL covers
it on whole segments, in the order written; an C<Alias> written with a trailing slash needs it
in the URL; else C<DocumentRoot>), and finds the file below the root with
L<Perennial::Executor::Resolver>: a file (with C<PATH_INFO> after it), a directory, 404, or a
403 with the reason for a symlink that C<Options FollowSymLinks> or C<SymLinksIfOwnerMatch>
of its directory does not allow.

=head1 METHODS

=head2 new, roots, translate, finder, find

=cut
