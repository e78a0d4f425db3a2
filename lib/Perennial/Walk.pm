package Perennial::Walk;
use v5.36;
use Perennial::Config::Handlers;

# Which sections apply to a request, and what they add up to, in Apache 2.4's order:
# <Directory> sections from the shortest path to the longest (in the order written when two
# are as deep), then <DirectoryMatch> and <Directory ~>, then <Files> and <FilesMatch> (those
# inside a matching <Directory> after the others), then <Location> and <LocationMatch> in the
# order written. A later section overrides an earlier one. No filesystem calls: the caller
# says which directory and file the URL names. The merged settings are built once for each
# set of matching sections and kept.

# Settings that a later section replaces when it has them
# (a section's list of mod_perl handlers for a phase replaces the one it inherits, as mod_perl's
# default)
my @SCALARS = (
    qw(handler app app_path mount response_handler setup_env parse_headers script_check
        request_deadline slow_request_time directory_index directory_slash force_type
        default_charset auth_type auth_name auth_user_file pass_auth merge_handlers
        global_request),
    Perennial::Config::Handlers::phase_keys()
);

my %PHASE = map { $_ => 1 } Perennial::Config::Handlers::phase_keys();

sub new ($class, %args) {
    my @sections = @{$args{sections} // []};
    my $depth    = sub ($sec) { scalar(() = $sec->{path} =~ m{/[^/]}g) };
    my %at       = map  { ($sections[$_] => $_) } 0 .. $#sections;    # As listed: main, then host
    my @dirs     = sort { $depth->($a) <=> $depth->($b) || $at{$a} <=> $at{$b} }
        grep { $_->{kind} eq 'directory' && $_->{match} ne 'regex' } @sections;
    return bless {
        bases     => ref $args{base} eq 'ARRAY' ? $args{base} : [$args{base} // {}],
        dirs      => \@dirs,
        dir_match => [grep { $_->{kind} eq 'directory' && $_->{match} eq 'regex' } @sections],
        files     => [
            (grep { $_->{kind} eq 'files' && !$_->{within} } @sections),
            (grep { $_->{kind} eq 'files' && $_->{within} } @sections)
        ],
        locations => [grep { $_->{kind} eq 'location' } @sections],
        merged    => {},
    }, $class;
}

# The location sections a URL path matches (a list of sections)
sub locations ($self, $url) {
    return grep { _location_matches($_, $url) } @{$self->{locations}};
}

# Every section that applies, as [directory sections, files sections, location sections]. The
# regex directory sections match the whole path, as Apache's (r->filename after its walk): the
# file's, or the directory's, with its slash unless $path says otherwise (a directory asked
# for without one)
sub matching ($self, $url, $dir, $file, $locations = undef, $path = undef) {
    my (@dirs, @files);
    if (defined $dir) {
        @dirs = @{$self->walked($dir)};
        $path //= defined $file && length $file ? "$dir/$file" : "$dir/";
        push @dirs, grep { $path =~ $_->{re} } @{$self->{dir_match}};
    }
    if (defined $file && length $file) {
        my %in = map { $_->{id} => 1 } @dirs;
        @files = grep {
                   (!$_->{within} || $in{$_->{within}{id}})
                && ($_->{match} eq 'prefix' ? $file eq $_->{path} : $file =~ $_->{re})
        } @{$self->{files}};
    }
    return (\@dirs, \@files, $locations // [$self->locations($url)]);
}

# The <Directory> sections of a directory, without the regex ones, which Apache applies only
# after its walk down the path: those its walk reads symlink options from
sub walked ($self, $dir) {
    [grep { _directory_matches($_, $dir) } @{$self->{dirs}}]
}

# The settings of those sections merged onto the server's base, kept for next time
sub merged ($self, @lists) {
    my @secs = map {@$_} @lists;
    my $key  = join ',', map { $_->{id} } @secs;
    return $self->{merged}{$key} //= _merge($self->{bases}, \@secs, $key);
}

# Apache's rule for a plain <Location>: the URL starts with the path, and the path ends with
# a slash or the URL goes on with one (or ends): /app is /app and /app/x, not /apple
sub _location_matches ($sec, $url) {
    return $url =~ $sec->{re} if $sec->{match} ne 'prefix';
    my $p = $sec->{path};
    return 0 unless index($url, $p) == 0;
    return 1 if length $url == length $p || substr($p, -1) eq '/';
    return substr($url, length $p, 1) eq '/';
}

sub _directory_matches ($sec, $dir) {
    return $dir =~ $sec->{re} if $sec->{match} eq 'wildcard';
    my $p = $sec->{path};    # Without a trailing slash (Config::Sections)
    return $p eq '/' || $dir eq $p || index($dir, "$p/") == 0;
}

sub _merge ($bases, $secs, $key) {
    my %set     = (key            => $key, sections => $secs);
    my %options = (FollowSymLinks => 1);                         # Apache 2.4's default
    for my $sec (@$bases, @$secs) {

        # PerlOptions +MergeHandlers (here or inherited): a section's Perl*Handler lists add to
        # those it inherits, as mod_perl merges them, instead of replacing them
        my $merge = $sec->{merge_handlers} // $set{merge_handlers};
        for my $key (grep { defined $sec->{$_} } @SCALARS) {
            $set{$key}
                = $merge && $PHASE{$key} && $set{$key}
                ? [@{$set{$key}}, @{$sec->{$key}}]
                : $sec->{$key};
        }
        $set{mount} = $sec->{path} =~ s{/+\z}{}r    # Where an application is mounted: /x/ is /x
            if defined $sec->{app} || ($sec->{handler} // '') =~ /status\z/;
        $set{where} = _place($sec) if $sec->{require};

        # A section with its own Require lines replaces what it inherits (AuthMerging Off), and
        # one with Order, Allow or Deny all of those (mod_access_compat has no merge)
        $set{require}       = $sec->{require} if $sec->{require};
        $set{access_compat} = {%{$sec->{access_compat}}, where => _place($sec)}
            if $sec->{access_compat};
        _add_up(\%set, $sec);
        _options(\%options, $_) for @{$sec->{options} // []};
    }
    $set{options}  = \%options;
    $set{exec_cgi} = $options{ExecCGI} ? 1 : 0;
    _server_rules(\%set, $bases) if $set{setenvif};
    return \%set;
}

# The SetEnvIf rules of the server level and a virtual host (the bases, merged first) run as the
# request is read, in Apache: they see Request_URI as it was sent (copies, marked raw)
sub _server_rules ($set, $bases) {
    my $n = 0;
    $n += @{$_->{setenvif} // []} for @$bases;
    my @rules = @{$set->{setenvif}};
    $_ = {%$_, raw => 1} for @rules[0 .. $n - 1];
    $set->{setenvif} = \@rules;
    return;
}

# Where a section was written, for the log lines of the refusals it makes
sub _place ($sec) { $sec->{file} ? "$sec->{file} line $sec->{line}" : 'the server level' }

# The settings that add up rather than replace
sub _add_up ($set, $sec) {
    for my $key (qw(set_env perl_env add_handler add_type add_encoding error_documents)) {
        $set->{$key} = {%{$set->{$key} // {}}, %{$sec->{$key}}} if $sec->{$key};
    }
    for my $key (qw(pass_env perl_pass_env)) {
        $set->{$key} = [@{$set->{$key} // []}, @{$sec->{$key}}] if $sec->{$key};
    }

    # SetEnvIf and BrowserMatch rules run in the order merged, the server level's first
    $set->{setenvif} = [@{$set->{setenvif} // []}, @{$sec->{setenvif}}] if $sec->{setenvif};

    # A host's redirects come before the main server's, a section's before both
    $set->{redirects} = [@{$sec->{redirects}}, @{$set->{redirects} // []}] if $sec->{redirects};

    $set->{dir_config} = __PACKAGE__->merged_vars($sec->{dir_config}, {%{$set->{dir_config} // {}}})
        if $sec->{dir_config};
}

# PerlSetVar replaces what a key had, PerlAddVar adds to it, as mod_perl merges them: the
# name => [values] of a list of [set|add, name, value]
sub merged_vars ($class, $ops, $vars = {}) {
    for my $op (@{$ops // []}) {
        my ($how, $k, $v) = @$op;
        $vars->{$k} = $how eq 'set' ? [$v] : [@{$vars->{$k} // []}, $v];
    }
    return $vars;
}

sub _options ($options, $directive) {
    my ($how, $steps) = @$directive;
    %$options = () if $how eq 'replace';
    for my $step (@$steps) {
        my ($sign, $name) = @$step;
        next unless length $name;
        if   ($sign eq '-') { delete $options->{$name} }
        else                { $options->{$name} = 1 }
    }
}

1;

__END__

=head1 NAME

Perennial::Walk - the sections a request matches, merged in Apache's order

=head1 SYNOPSIS

    my $walk = Perennial::Walk->new(sections => $config->sections, base => [$config->server_dir]);
    my $set  = $walk->merged($walk->matching('/app/x.pl', '/srv/app', 'x.pl'));
    say $set->{handler}, ' ', join ',', sort keys %{$set->{options}};

=head1 DESCRIPTION

Given the URL path, the directory and the file name a request maps to, finds the sections that
apply and merges them as Apache's core does: C<< <Directory> >> by depth, then the regex
directory sections, then C<< <Files> >> and C<< <FilesMatch> >>, then C<< <Location> >> and
C<< <LocationMatch> >> in the order written; a later one overrides an earlier one. Two
sections for the same path therefore both apply, and no setting (a C<Require> above all) can
be lost by splitting a section in two. C<Require> lines of a section replace those it
inherits (Apache's C<AuthMerging Off>); C<Options> with C<+>/C<-> change what is inherited.

=head1 METHODS

=head2 locations

    my @sections = $walk->locations($url_path);

=head2 matching

    my ($dirs, $files, $locations) = $walk->matching($url_path, $directory, $file_name);
    my ($dirs, $files, $locations) = $walk->matching($url_path, $directory, undef, undef, $directory);

C<< <DirectoryMatch> >> and C<< <Directory ~> >> match the whole path, as Apache's: the file's,
else the directory's with a trailing slash, unless the last argument gives the path (a
directory asked for without its slash).

=head2 walked

    my $sections = $walk->walked($directory);

The C<< <Directory> >> sections of a directory (plain and wildcard, not regex): those Apache's
walk down the path reads C<Options> from, symlinks' among them.

=head2 merged

    my $settings = $walk->merged($dirs, $files, $locations);

The merged settings: C<handler>, C<app_path> and C<mount>, C<response_handler>, C<options> (a
hash), C<exec_cgi>, C<require> and C<where>, C<set_env>, C<pass_env>, C<add_handler>,
C<add_type>, C<add_encoding>, C<force_type>, C<directory_index>, C<directory_slash>, and C<key>,
which names the set of sections.

=cut
