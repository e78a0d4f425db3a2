package Perennial::Dispatch;
use v5.36;
use Plack::Util  ();
use Scalar::Util ();
use Perennial::Authz;
use Perennial::Config::Handlers;
use Perennial::Dispatch::Answers qw(encoded missing no_handler no_index refused trace_echo);
use Perennial::Dispatch::Files;
use Perennial::Dispatch::Plans;
use Perennial::ErrorDocument;
use Perennial::ErrorPage;
use Perennial::Executor::Environment;
use Perennial::Redirect;
use Perennial::SetEnvIf;
use Perennial::ModPerl::Phases;

# A request's way through the configuration, as Apache's request processing: the URL is
# translated to a file (Perennial::Dispatch::Files: the first Alias or ScriptAlias that covers
# it, else DocumentRoot), the file is found (unless a <Location> hands the URL to a PSGI
# application or a status page, which need none), the sections that match are merged
# (Perennial::Walk), their Require lines are checked, and the handler they choose runs: a PSGI
# application, a status page, a script executor, or the static files of Perennial::Static,
# with mod_dir's trailing slash and DirectoryIndex for directories.

sub new ($class, %args) {
    my $files = Perennial::Dispatch::Files->new(%args{qw(aliases document_root walk)});
    my $self  = bless {
        walk   => $args{walk},
        log    => $args{log},
        build  => $args{build},        # ($handler, $settings, $root) -> app or executor
        static => $args{static},
        trace  => $args{trace} // 1,
        apps   => {},
        files  => $files,
        plans  => Perennial::Dispatch::Plans->new(walk => $args{walk}, files => $files),
        phases => Perennial::ModPerl::Phases->new(%args{qw(log top document_root)}),
    }, $class;
    return $self;
}

# The executor (a script's or a handler module's) that a request for the file at this URL path
# would reach, made now if it was not made yet; nothing when the URL leads elsewhere. The
# manager makes them before the workers fork (Perennial::Dispatch::Warmup): the sections are
# merged as for a request, but the file is not looked for, and no plan is kept, so that each
# request still finds its file as the worker sees it.
sub executor_for ($self, $url) {
    my ($root, $rest)    = $self->{files}->translate($url);
    my ($dir,  $name)    = $root ? "$root->{dir}$rest" =~ m{\A(.*)/([^/]+)\z} : () or return;
    my ($set,  $handler) = $self->{plans}->settings($url, [$self->{walk}->locations($url)],
        $dir, $name, $root, {file => "$dir/$name"});
    my $kind = Perennial::Dispatch::Plans::kind($handler, $set);
    return if $kind ne 'script' && $kind ne 'module';
    return $self->_executor({handler => $handler, set => $set, root => $root, kind => $kind});
}

# The Registry executor that a request for this URL path would reach, with its handler's name
sub registry_for ($self, $url) {
    my $plan
        = $self->plan(
        {PATH_INFO => $url, SCRIPT_NAME => '', REQUEST_URI => $url, REQUEST_METHOD => 'GET'});
    return unless $plan->{kind} eq 'script' && ref $plan->{hit} && $plan->{hit}{file};
    my $name   = $plan->{set}{response_handler} // return;
    my $policy = Perennial::Config::Handlers::handler_policy($name);
    return unless $policy && $policy->{mode} eq 'registry';
    return ($self->_executor($plan), $name);
}

# Where URLs are translated to: each Alias and ScriptAlias, and DocumentRoot
sub roots ($self) { $self->{files}->roots }

# A URL whose plan goes straight to a script or to an application mounted at a <Location> (a
# direct plan) is served without the way through the rest: the checks on that way (an encoded
# path, TRACE, redirects, access rules, mod_perl's phases) were made when the plan was, and found
# nothing to do. That way cost a Registry request 19k instructions, and a PSGI hello at a
# <Location> of a site with a DocumentRoot 24k (docs/design-notes.md). Each way is written out
# here, not in a method of its own: a call costs 1.5k to 3k instructions.
## no critic (ProhibitExcessComplexity) one closure on purpose, as said above
sub to_app ($self) {
    my $plans = $self->{plans}->kept;
    return sub ($env) {
        my $plan = $plans->{$env->{PATH_INFO}};
        if (   $plan
            && $plan->{direct}
            && $env->{REQUEST_METHOD} ne 'TRACE'
            && index($env->{REQUEST_URI} // '%', '%') < 0)
        {
            if ($plan->{direct} eq 'module') {    # Closed after its response by psgix.cleanup
                return $self->_dispatch($env, 0) unless $env->{'psgix.cleanup'};

                # A handler module whose response is its only phase, as _phased runs it (here,
                # not in a method of its own: the call was 2k instructions a request): its
                # request object opened, nothing to run before the response, and no log phase
                # to give the status sent to (what finish records)
                my $executor = $plan->{executor} //= $self->_executor($plan);
                my $res      = $executor->serve(
                    $env,
                    $self->{phases}->open($env, $plan),
                    $plan->{declined} //= $self->_declined_at_top($plan)
                );
                my $charset = $plan->{set}{default_charset};
                return $charset ? _charset($res, $charset) : $res;
            }
            if ($plan->{direct} eq 'mounted') {    # As _handle calls it: its answer is its own

                # At / (nothing to move from PATH_INFO to SCRIPT_NAME), made already: called
                # here, as _mounted would call it (the method's call cost 2.5k instructions),
                # after what _mounted does first
                my $app = $plan->{app};
                my $res;
                if ($app && !length($plan->{set}{mount} // '')) {
                    Perennial::Executor::Environment->forget_script_env($env)
                        if length $Perennial::Executor::Environment::CGI_SET{names};
                    $res = $app->($env);
                }
                else { $res = $self->_mounted($env, $plan) }
                my $charset = $plan->{set}{default_charset};
                return $charset ? _charset($res, $charset) : $res;
            }

            # Its file checked as a kept plan's is (no longer the one the plan found: the whole
            # way then), then the executor, as _handle calls it. (Here, not in a method of its
            # own: the call was 2.6k instructions a request.)
            my $hit = $plan->{finder}
                ->resolve($env, $plan->{rest}, ($env->{SCRIPT_NAME} // '') . $plan->{root}{url});
            if (ref $hit && $hit == $plan->{hit}) {
                my $executor = $plan->{executor} //= $self->_executor($plan);
                local $env->{SCRIPT_NAME} = $env->{SCRIPT_NAME} . $plan->{root}{url};
                local $env->{PATH_INFO}   = $plan->{rest};
                my $set = $plan->{set};
                my $res = $executor->serve($env, $hit);
                $res = $self->_documented($env, 0, $set, $res) if $set->{error_documents};
                return $set->{default_charset} ? _charset($res, $set->{default_charset}) : $res;
            }
        }
        return $self->_dispatch($env, 0);
    };
}

# What a handler module's direct way serves when its handler declines, kept with the plan (which
# it holds weakly)
sub _declined_at_top ($self, $plan) {
    Scalar::Util::weaken(my $own = $plan);
    return sub ($e) { $self->_declined($e, 0, $own) };
}

# What serves a URL path (Perennial::Dispatch::Plans), kept per URL; also used to preload the
# scripts a URL would run
sub plan ($self, $env) { $self->{plans}->plan($env) }

# What Perennial answered itself (not an application's own 404) gets the ErrorDocument; a
# request that is itself an ErrorDocument's does not, as Apache's (no page for the page's own
# failure, and no loop)
sub _documented ($self, $env, $depth, $set, $res) {
    return $res
        unless ref $res eq 'ARRAY'
        && $res->[0] >= 400
        && $depth < 5
        && Perennial::ErrorDocument->applies($env, $set, $res->[0]);
    return Perennial::ErrorDocument->apply($env, $set, $res,
        sub ($e) { $self->_dispatch($e, $depth + 1) });
}

# With the plan when the caller has it already (DirectoryIndex found its file). The path comes
# without . and .. segments, a client's (Perennial::HTTP::Request) and an internal redirect's
# (Perennial::Subrequest) alike. An encoded slash in it is refused, whatever serves it, as
# Apache's AllowEncodedSlashes Off; an encoded NUL (kept as %00 in PATH_INFO) where a file or a
# script would be looked for, as Apache's 404: an application mounted at a <Location> or a
# handler module is given it.
sub _dispatch ($self, $env, $depth, $plan = undef) {
    my $encoded = index($env->{REQUEST_URI} // '', '%') >= 0;
    return encoded($self->{log}, $env, 'slash')
        if $encoded && $env->{REQUEST_URI} =~ m{\A[^?]*?%2f}i;
    my $from_index = defined $plan;
    $plan //= $self->plan($env);
    return encoded($self->{log}, $env, 'NUL')
        if $encoded
        && $plan->{kind} ne 'mounted'
        && $plan->{kind} ne 'module'
        && index($env->{PATH_INFO}, '%00') >= 0;
    my $set = $plan->{set};

    _set_variables($env, $set) unless $from_index;
    my $moved = $set->{redirects} && Perennial::Redirect->find($set->{redirects}, $env);
    my ($res, $own) = $moved ? ($moved, 1) : $self->_answer($env, $depth, $plan);
    $res = $self->_documented($env, $depth, $set, $res) if $own;
    return $set->{default_charset} ? _charset($res, $set->{default_charset}) : $res;
}

# SetEnvIf and BrowserMatch, before the access rules, as Apache's: a redirected request sets
# its own (Apache runs them again for it; Perennial::Subrequest gives it none of the request
# before's), but a DirectoryIndex file, which _directory found, keeps its directory's, as
# mod_dir's subrequest has its request's
sub _set_variables ($env, $set) {
    $env->{'perennial.setenvif'} = Perennial::SetEnvIf::variables($set->{setenvif}, $env)
        if $set->{setenvif};
    return;
}

# The response, and whether Perennial made it (a refusal, an error) rather than a handler. A
# request whose sections name mod_perl handlers runs its phases around the way through.
sub _answer ($self, $env, $depth, $plan) {
    if ($env->{REQUEST_METHOD} eq 'TRACE') {
        return (trace_echo($self->{log}, $env), 1) if $self->{trace};
        $self->{log}->warn("TRACE refused (TraceEnable Off): $env->{REQUEST_URI}") if $self->{log};
        return (Perennial::ErrorPage->response(405, $env), 1);
    }
    return $self->_phased($env, $depth, $plan) if $plan->{perl};
    if ($plan->{authz}) {    # Someone to ask
        my $refused = Perennial::Authz->decide($plan->{set}, $env, $self->{log}, $plan->{guard});
        return ($refused, 1) if $refused;
    }
    return $self->_handle($env, $depth, $plan);
}

# With mod_perl's phases around: those before authentication, Require and the rest with the
# authentication and authorization handlers, those after, the handler, then log and cleanup
sub _phased ($self, $env, $depth, $plan) {
    my $phases = $self->{phases};
    my $r      = $phases->open($env, $plan);
    my ($res, $own) = $phases->before_auth($r);
    if (!$res && $plan->{authz}) {
        $res = Perennial::Authz->decide($plan->{set}, $env, $self->{log}, $plan->{guard},
            $phases->auth($r));
        $own = $phases->made_here($r, $res);
    }
    ($res, $own) = $phases->after_auth($r) unless $res;
    if (!$res) {
        ($res, $own) = $self->_handle($env, $depth, $plan, $r);
        $res = $phases->with_tables($r, $res) if $plan->{kind} eq 'static';    # A file, or 404
    }
    return ($phases->finish($r, $res), $own);
}

sub _handle ($self, $env, $depth, $plan, $r = undef) {
    my ($set, $hit, $kind) = @$plan{qw(set hit kind)};
    return $self->_mounted($env, $plan) if $kind eq 'mounted';
    return ($self->_module($env, $depth, $plan, $r),      0) if $kind eq 'module';
    return (missing($self->{log}, $env, $hit // 404),     1) unless ref $hit;
    return (refused($self->{log}, $env, $hit),            1) if $hit->{status};
    return ($self->_directory($env, $plan, $hit, $depth), 1) if $hit->{directory};
    return (missing($self->{log}, $env, 404), 1)    # Apache's default handler takes no path info
        if $kind eq 'static' && length($hit->{path_info} // '');
    return ($self->{static}->serve($env, $hit, $set),               1) if $kind eq 'static';
    return (no_handler($self->{log}, $env, $plan->{handler}, $hit), 1) if $kind ne 'script';
    my $executor = $plan->{executor} //= $self->_executor($plan);
    local $env->{SCRIPT_NAME} = $env->{SCRIPT_NAME} . $plan->{root}{url};
    local $env->{PATH_INFO}   = $plan->{rest};
    return ($executor->serve($env, $hit, $r), 1);    # An array is its own error; a script streams
}

# A mod_perl response handler; if it declines, the file the URL maps to, as Apache's default
# handler serves it
sub _module ($self, $env, $depth, $plan, $r) {
    my $executor = $plan->{executor} //= $self->_executor($plan);
    my $declined
        = $depth
        ? sub ($e) { $self->_declined($e, $depth, $plan) }
        : ($plan->{declined} //= $self->_declined_at_top($plan));    # As the direct way keeps it
    return $executor->serve($env, $r, $declined);
}

sub _declined ($self, $env, $depth, $plan) {
    my $root   = $plan->{root} or return missing($self->{log}, $env, 404);
    my $finder = $self->{files}->finder($root, $plan->{set}{script_check} // 'always');
    my $hit    = Perennial::Dispatch::Files->find($finder, $root, $plan->{rest}, $env);
    my ($res)  = $self->_handle($env, $depth, {%$plan, hit => $hit, kind => 'static'});
    return $self->_documented($env, $depth, $plan->{set}, $res);     # Its 404 is Perennial's
}

# AddDefaultCharset: text/plain and text/html without a charset get one, whoever made them
sub _charset ($res, $charset) {
    return Plack::Util::response_cb(
        $res,
        sub ($r) {
            my $h = $r->[1];
            for (my $i = 0; $i < @$h; $i += 2) {
                next unless lc $h->[$i] eq 'content-type';
                $h->[$i + 1] .= "; charset=$charset"
                    if $h->[$i + 1] =~ m{\Atext/(?:plain|html)\s*\z}i;
            }
            return;
        }
    );
}

# Whether an Alias, a ScriptAlias or DocumentRoot covers a URL path
sub translates ($self, $url) {
    my ($root) = $self->{files}->translate($url);
    return $root ? 1 : 0;
}

# One executor per handler, merged settings and root, whichever URLs reach it
sub _executor ($self, $plan) {
    my ($handler, $set, $root, $kind) = @$plan{qw(handler set root kind)};
    my $key = "$handler|$set->{key}|" . ($root ? $root->{id} : '');
    return $self->{apps}{$key} //= do {
        $self->{log}
            ->debug("process $$ makes the $handler executor of " . (($root && $root->{url}) || '/'))
            if $self->{log};
        $self->{build}->($handler, $set, $root, $kind eq 'module' ? $self->{phases} : ());
    };
}

# A PSGI application or a status page, mounted at its <Location>: the path moves from
# PATH_INFO to SCRIPT_NAME, as Plack::App::URLMap does, and moves back once the response has
# come, so that a delayed response still sees the mount
sub _mounted ($self, $env, $plan) {

    Perennial::Executor::Environment->forget_script_env($env);    # No other client's variables
    my ($handler, $set) = @$plan{qw(handler set)};
    my $app = $plan->{app} //= $self->{apps}{"$handler|$set->{key}"}
        //= $self->{build}->($handler, $set);
    my $mount = $set->{mount} // '';
    my $path  = $env->{PATH_INFO};
    return $app->($env) unless length $mount && index($path, $mount) == 0;
    my $script = $env->{SCRIPT_NAME};
    @$env{qw(SCRIPT_NAME PATH_INFO)} = ($script . $mount, substr $path, length $mount);
    my $res = $app->($env);

    if (ref $res eq 'ARRAY') {    # Answered already: nothing to wait for
        @$env{qw(SCRIPT_NAME PATH_INFO)} = ($script, $path);
        return $res;
    }
    return Plack::Util::response_cb($res,
        sub ($r) { @$env{qw(SCRIPT_NAME PATH_INFO)} = ($script, $path); return });
}

# As mod_dir's subrequest for an index name: one its access rules refuse is passed over for
# the next name (its refusal logged), unless it asks who the client is and is the only name
# (then the request asks too). A name with mod_perl's phases is tried as it is.
sub _index_refused ($plan, $env, $log, $names) {
    return 0 unless $plan->{authz} && !$plan->{perl};
    my $res = Perennial::Authz->decide($plan->{set}, $env, $log, $plan->{guard}) or return 0;
    return !($res->[0] == 401 && $names == 1);
}

# mod_dir: a directory without its slash is sent to it (301); with it, the first
# DirectoryIndex file that exists (and that its access rules let in) is served as if asked for;
# otherwise what its handler answers for a directory (Perennial::Dispatch::Answers::no_index)
sub _directory ($self, $env, $plan, $hit, $depth) {
    my $set = $plan->{set};
    if (!$hit->{slash}) {
        return missing($self->{log}, $env, 404)
            if ($set->{directory_slash} // 1) == 0;
        my $query = length($env->{QUERY_STRING} // '') ? "?$env->{QUERY_STRING}" : '';
        my $to    = ($env->{SCRIPT_NAME}        // '') . $env->{PATH_INFO} . "/$query";
        my $host  = $env->{HTTP_HOST} // "$env->{SERVER_NAME}:$env->{SERVER_PORT}";
        my $url
            = ($env->{'psgi.url_scheme'} // 'http')
            . "://$host"
            . Perennial::Redirect::escape_path($to);
        return Perennial::ErrorPage->response(301, $env, Location => $url);
    }
    my @names = @{$set->{directory_index} // ['index.html']};
    for my $index (@names) {
        my $path = $index =~ m{\A/} ? $index : $env->{PATH_INFO} . $index;
        local $env->{PATH_INFO} = $path;
        my $found = $self->plan($env);
        next unless ref $found->{hit} && $found->{hit}{file};
        next if _index_refused($found, $env, $self->{log}, scalar @names);
        return Perennial::ErrorPage->response(500, $env) if $depth > 5;
        return $self->_dispatch($env, $depth + 1, $found);
    }
    return no_index($self->{log}, $env, $plan, $hit, \@names);
}

1;

__END__

=head1 NAME

Perennial::Dispatch - a request's way through the configuration, as Apache's

=head1 SYNOPSIS

    my $dispatch = Perennial::Dispatch->new(
        walk          => Perennial::Walk->new(sections => $config->sections),
        aliases       => $config->aliases,
        document_root => $config->document_root,
        static        => Perennial::Static->new(types => $types, log => $log),
        build         => sub ($handler, $settings, $root = undef) { ... },
        log           => $log,
    );
    my $app = $dispatch->to_app;

=head1 DESCRIPTION

Translates the URL (the first C<Alias>/C<ScriptAlias> that covers it, in the order written,
else C<DocumentRoot>: L<Perennial::Dispatch::Files>), finds the file unless a C<< <Location> >> hands the URL to a PSGI
application or a status page, merges the sections that match (L<Perennial::Walk>), checks
their C<Require> lines (status pages: C<Require local> unless their C<< <Location> >> has its
own), and
runs the handler: C<SetHandler>, else C<AddHandler> for the file's extensions, else
C<cgi-script> under a C<ScriptAlias>, else static files (L<Perennial::Static>). A directory
URL without its slash gets 301 to it (C<DirectorySlash>); with it, the first C<DirectoryIndex>
file that exists is served (C<index.html> by default), or 403 with the reason in the log.
C<TraceEnable Off> answers TRACE with 405; under C<TraceEnable On> (the default) a TRACE is
answered as Apache's core answers it, before access rules, with the request's head as sent
(C<message/http>), and no handler, script or file is reached (one with a body gets 413).

What it found for a URL is kept (its plan), and checked again on each request as cheaply as it
can be (the file still the one found). A URL whose plan runs a script with nothing on the way
(no redirect that moves it, no access rule, no mod_perl phase) goes from the second request on
straight to its executor, once its file is checked; TRACE and a %-encoded target go the whole
way every time.

=head1 METHODS

=head2 new

    my $dispatch = Perennial::Dispatch->new(%args);

=head2 plan

    my $plan = $dispatch->plan({PATH_INFO => '/x.pl', ...});    # {set, root, rest, hit, handler, ...}

What would serve a URL, without serving it.

=head2 executor_for

    my $executor = $dispatch->executor_for('/cgi-bin/hello.pl');

The executor (Registry, PerlRun, mod_cgi or a handler module's) that a request for the URL
would reach, made now if it was not made yet; nothing when the URL leads elsewhere. The
manager makes them before the workers fork (L<Perennial::Dispatch::Warmup>).

=head2 registry_for

    my ($executor, $handler_name) = $dispatch->registry_for('/perl/app.pl');

The Registry executor a request for the URL would reach (for PerlPreloadScripts), or nothing.

=head2 roots

    my @roots = $dispatch->roots;    # {url, dir, script, id}

=head2 translates

    my $yes = $dispatch->translates('/cgi-bin');

=head2 to_app

    my $app = $dispatch->to_app;

=cut
