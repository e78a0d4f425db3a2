package Perennial::Dispatch::Plans;
use v5.36;
use Perennial::Access;
use Perennial::Config::Handlers;
use Perennial::Dispatch::Files;
use Perennial::MimeTypes;
use Perennial::ModPerl::Phases;
use Perennial::Redirect;

# What serves a URL path, as Apache's request processing decides it, worked out once and kept
# by the URL: the file it maps to (Perennial::Dispatch::Files), the sections that apply, merged
# (Perennial::Walk), the handler they choose and what kind of work that is, whether someone is
# to be asked on its way (access rules, mod_perl's phases, a redirect), and so whether its
# requests may go straight to their script or application. Perennial::Dispatch follows a plan;
# this makes it, keeps it, and says when a kept one no longer holds.

my $LOCAL     = [Perennial::Access->parse('local')];
my $MAX_PLANS = 10_000;    # URLs whose way is kept, so made-up ones cannot grow it without end

# What a handler does with a request: mounted at its <Location> (no file), a script, a file
my %KIND = (
    psgi              => 'mounted',
    'server-status'   => 'mounted',
    'perl-status'     => 'mounted',
    'server-health'   => 'mounted',
    'perl-script'     => 'script',    # A handler module rather than Registry: 'module'
    modperl           => 'script',
    'cgi-script'      => 'script',
    'default-handler' => 'static',
);

sub new ($class, %args) {
    return bless {walk => $args{walk}, files => $args{files}, kept => {}}, $class;
}

# The plans kept, by URL path: the dispatcher's direct way reads them without a call
sub kept ($self) { $self->{kept} }

# What serves a URL path: {set} the merged settings, {root} the Alias or DocumentRoot it maps
# into and {rest} the path below it, {hit} the file found (or a status), {handler} and its
# {kind}; kept per URL, with what it needs on the way ({executor}, {app}) once it is known.
# Also used to preload the scripts a URL would run.
sub plan ($self, $env) {
    my $url = $env->{PATH_INFO};
    if (my $known = $self->_known($url, $env)) { return $known }
    my $walk  = $self->{walk};
    my @locs  = $walk->locations($url);
    my $early = $walk->merged([], [], \@locs);
    my ($root, $rest) = $self->{files}->translate($url);
    my ($hit, $finder, $dir, $name);
    my $looks = $root && kind($early->{handler} // '', $early) !~ /\A(?:mounted|module)\z/;

    if ($looks) {
        $finder = $self->{files}->finder($root, $early->{script_check} // 'always');
        $hit    = Perennial::Dispatch::Files->find($finder, $root, $rest, $env);
        ($dir, $name)
            = ref $hit && !$hit->{status}
            ? ($hit->{directory} // $hit->{dir}, $hit->{directory} ? undef : _name($hit->{file}))
            : ();
    }
    ($dir, $name) = ("$root->{dir}$rest" =~ m{\A(.*)/([^/]*)\z}) if $root && !defined $dir;
    my ($set, $handler) = $self->settings($url, \@locs, $dir, $name, $root, $hit);
    my $plan = {
        set     => $set,
        root    => $root,
        rest    => $rest,
        hit     => $hit,
        finder  => $finder,
        handler => $handler,
        kind    => kind($handler, $set),
        guard   => $handler =~ /status\z/ ? _guard($set) : undef,
        perl    => Perennial::ModPerl::Phases->wanted($set),
    };
    $plan->{authz} = _asks_authz($set, $plan->{guard});

    # The whole way for SetEnvIf's rules and for a root with symlinks to look at on the way
    $plan->{direct}
        = !$set->{setenvif}
        && !($root && @{$root->{link_checks} // []})
        && _goes_direct($plan, $url);
    $self->_keep($url, $plan) unless $looks && !$finder;    # A root not there yet: not kept
    return $plan;
}

# A URL seen before: the same plan, unless the file it names is no longer the one found
# (a directory is the same one when the finder names it again; a URL that comes back refused,
# such as one with an encoded slash, does not throw away the plan of the path it decodes to)
sub _known ($self, $url, $env) {
    my $plan   = $self->{kept}{$url} or return;
    my $finder = $plan->{finder}     or return $plan;
    return    # A symlink on the way to its root refused now: the whole way, refused there
        if $plan->{root}{link_checks}
        && @{$plan->{root}{link_checks}}
        && Perennial::Dispatch::Files::link_refused($plan->{root});

    # Asked of the finder itself, as Files->find asks it (a refusal is not this plan's either way)
    my $hit
        = $finder->resolve($env, $plan->{rest}, ($env->{SCRIPT_NAME} // '') . $plan->{root}{url});
    return unless ref $hit;
    my $was = $plan->{hit};
    return $plan
        if $hit == $was
        || ($hit->{directory}
        && $was->{directory}
        && $hit->{directory} eq $was->{directory}
        && $hit->{slash} == $was->{slash});
    delete $self->{kept}{$url};
    return;
}

# Whether a plan's requests have someone to ask on their way: Require lines (unless they let
# everyone in), Order/Allow/Deny, or a status page's guard
sub _asks_authz ($set, $guard) {
    return
           ($set->{require} && !_granted_to_all($set->{require}))
        || $set->{access_compat}
        || $guard ? 1 : 0;
}

# Require lines that let everyone in: a `Require all granted` among them (their implicit
# <RequireAny> holds, with no user asked for), as a site's <Directory> has it for its DocumentRoot
sub _granted_to_all ($rules) {
    return (grep { ref $_ eq 'HASH' && $_->{all} } @$rules) ? 1 : 0;
}

# A plan whose requests may go straight to the script's executor ('script': a script file
# found), to the application mounted there ('mounted') or to a handler module whose response is
# its only mod_perl phase ('module'), with no redirect that moves its URL, access rule or other
# mod_perl phase on its way; else 0
sub _goes_direct ($plan, $url) {
    my ($set, $hit) = @$plan{qw(set hit)};
    return 0 if $plan->{authz};
    return 0 if $set->{redirects} && Perennial::Redirect->applies($set->{redirects}, $url);
    if ($plan->{perl}) {    # mod_perl's phases: a handler module's response alone goes direct
        my $alone = Perennial::ModPerl::Phases->response_only($set);

        # With no file looked up for it (a <Location>'s): one whose file is looked for is asked
        # again on each request, which the direct way does not
        return $plan->{kind} eq 'module' && $alone && !$plan->{finder} ? 'module' : 0;
    }
    return 'mounted' if $plan->{kind} eq 'mounted';
    return 0 unless $plan->{kind} eq 'script' && $plan->{finder} && ref $hit && $hit->{file};
    return $hit->{status} || $hit->{directory} ? 0 : 'script';
}

# Kept when it can be checked cheaply next time: no file, a file the finder keeps, a directory
sub _keep ($self, $url, $plan) {
    return
        if $plan->{finder}
        && !(ref $plan->{hit} && ($plan->{hit}{file} || $plan->{hit}{directory}));

    # A script's file is the worker's to watch (Perennial::FileWatch), not every file served
    $plan->{hit}{watch} = 1 if $plan->{kind} eq 'script' && ref $plan->{hit};
    %{$self->{kept}} = () if keys %{$self->{kept}} >= $MAX_PLANS;
    $self->{kept}{$url} = $plan;
}

# The sections that apply to a URL whose file is $name in $dir (with $locs, its <Location>s),
# merged, and the handler they choose for the file
sub settings ($self, $url, $locs, $dir, $name, $root, $hit) {
    my $walk = $self->{walk};
    my $path = ref $hit && $hit->{directory} && !$hit->{slash} ? $dir : undef;    # No slash
    my $set  = $walk->merged(($walk->matching($url, $dir, $name, $locs, $path))[0, 1], $locs);
    return ($set, $self->_handler($set, $root, $hit));
}

# The handler the sections chose: SetHandler, else an AddHandler for the file's extension,
# else cgi-script under a ScriptAlias, else the static files
sub _handler ($self, $set, $root, $hit) {
    my $handler = $set->{handler};
    return $handler if defined $handler && $handler ne 'default-handler';
    $handler //= Perennial::MimeTypes->handler_of($hit->{file}, $set) if ref $hit && $hit->{file};
    $handler //= 'cgi-script'                                         if $root && $root->{script};
    return $handler // 'default-handler';
}

# A status page is for the local host unless its own <Location> says who may see it, or one
# merged after it (as a Require local written in it would be replaced); a <Directory> granting
# the document root to all, or a <Location /> before it, does not count
sub _guard ($set) {
    my @sections = @{$set->{sections}};
    my ($own)    = grep { ($sections[$_]{handler} // '') =~ /status\z/ } reverse 0 .. $#sections;
    my $told     = grep { $_->{kind} eq 'location' && ($_->{require} || $_->{access_compat}) }
        @sections[($own // 0) .. $#sections];
    return $told ? undef : $LOCAL;
}

# What a handler's kind of work is: perl-script and modperl run Registry scripts when their
# PerlResponseHandler is ModPerl::Registry or the like, and a handler module otherwise
sub kind ($handler, $set) {
    my $kind = $KIND{$handler} // 'none';
    return $kind    if $kind ne 'script' || $handler eq 'cgi-script';
    return 'script' if Perennial::Config::Handlers::handler_policy($set->{response_handler} // '');
    return $set->{perl_response} ? 'module' : 'none';    # No handler at all: never the source
}

sub _name ($file) { $file =~ m{([^/]*)\z} }

1;

__END__

=head1 NAME

Perennial::Dispatch::Plans - what serves a URL path, worked out once and kept

=head1 SYNOPSIS

    my $plans = Perennial::Dispatch::Plans->new(walk => $walk, files => $files);
    my $plan  = $plans->plan($env);    # {set, root, rest, hit, finder, handler, kind, direct ...}

=head1 DESCRIPTION

A plan says what serves a URL path: C<set> the merged settings of the sections that apply,
C<root> the Alias, ScriptAlias or DocumentRoot the path maps into and C<rest> the path below
it, C<hit> the file found (or a refusal's status), C<handler> and its C<kind> (C<mounted>,
C<script>, C<module>, C<static> or C<none>), C<authz> whether someone is to be asked on the
way, and C<direct> (C<mounted>, C<script> or 0) whether its requests may go straight to their
application or script. Plans are kept per URL path (ten thousand at most) when they can be
checked cheaply next time; a kept plan whose file is no longer the one found is made again.

=head1 METHODS

=head2 new

    my $plans = Perennial::Dispatch::Plans->new(walk => $walk, files => $files);

=head2 plan

    my $plan = $plans->plan($env);

=head2 kept

    my $by_path = $plans->kept;

=head2 settings

    my ($set, $handler) = $plans->settings($url, \@locations, $dir, $name, $root, $hit);

The sections that apply to a URL whose file is C<$name> in C<$dir>, merged, and the handler
they choose for the file.

=head1 FUNCTIONS

=head2 kind

    my $kind = Perennial::Dispatch::Plans::kind($handler, $set);

=cut
