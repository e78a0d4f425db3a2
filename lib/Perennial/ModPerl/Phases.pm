package Perennial::ModPerl::Phases;
use v5.36;
use Plack::Util ();
use Perennial::ModPerl::Const;
use Scalar::Util qw(looks_like_number);
use Hash::Util   qw(hv_store);
use Perennial::Config::Handlers;
use Perennial::Executor::Environment;
use Perennial::ModPerl;
use Perennial::Access ();
use Perennial::ModPerl::Handler;
use Perennial::ModPerl::Phases::Auth;    # before_auth, auth, after_auth

# mod_perl's request phases, for a request whose sections name handlers for them: one request
# object from the first phase to the last, and each phase run as Apache runs it. Post read,
# header parser and access before authentication; PerlAuthenHandler and PerlAuthzHandler
# inside it, when the Require lines need a user (Perennial::Authz asks); type and fixup after;
# the response (a handler module, or whatever the sections chose); log and cleanup once the
# response has gone (psgix.cleanup). A handler returns OK or DECLINED to go on, DONE to end the
# request, or an HTTP status to answer with (Apache's page for it, err_headers_out,
# custom_response). In the phases that run every handler (RUN_ALL) the first other answer ends
# the phase; in those that stop at the first handler that does not decline (RUN_FIRST:
# authen, authz, type, response), that handler's answer is the phase's.

my ($OK, $DECLINED, $DONE)
    = (Apache2::Const::OK(), Apache2::Const::DECLINED(), Apache2::Const::DONE());
my @KEYS = Perennial::Config::Handlers::phase_keys();

# Each phase's directive and whether it is RUN_FIRST, looked up here rather than asked of
# Perennial::Config::Handlers on each call (a function call each, on every request)
my %DIRECTIVE = map { ($_ => Perennial::Config::Handlers::directive_of($_)) } @KEYS;
my %RUN_FIRST = map { ($_ => Perennial::Config::Handlers::runs_first($_)) } @KEYS;
my @BEFORE    = qw(perl_post_read perl_header_parser perl_access perl_authen perl_authz perl_type
    perl_fixup);
my @AFTER = qw(perl_log perl_cleanup);    # Which see %ENV as the response left it

# top: the finished application, for internal redirects; document_root: the server's
sub new ($class, %args) { bless {%args{qw(log top document_root)}}, $class }

# Whether merged settings name a handler for any phase
sub wanted ($class, $set) {
    return 1 if grep { $set->{$_} } @KEYS;
    return Perennial::Access->asks_provider($set->{require}) ? 1 : 0;    # Given the request object
}

# Whether the response is the only phase they name a handler for: nothing to run before it, and
# no log or cleanup phase that needs the status the response was sent with
sub response_only ($class, $set) {
    return 0 if grep { $_ ne 'perl_response' && $set->{$_} } @KEYS;
    return Perennial::Access->asks_provider($set->{require}) ? 0 : 1;
}

# The request's object, made as its first phase begins; its log and cleanup phases are set to
# run once the response has gone (or, with none, its cleanups, once one is registered: see
# arm_close). $plan: the dispatcher's (settings, handler, root, file).
sub open ($self, $env, $plan) {
    my ($root, $hit) = @$plan{qw(root hit)};
    my $site = $plan->{phase_site} //= $self->_site($plan);
    my $r    = Perennial::ModPerl::request_object($env, undef, undef, $site, $self);

    # No CGI variables of an earlier request in %ENV for handlers that run before a response
    # sets them (perl-script sets this one's, a script its own; modperl none, as mod_perl), nor
    # for log and cleanup handlers after a response that sets none (a file's, mod_cgi's), and
    # the section's PerlSetEnv and PerlPassEnv variables, which mod_perl sets for every handler
    if ($site->{clean_env}) {
        my $own = $site->{perl_env};
        Perennial::Executor::Environment->apply($own ? [$own] : [])
            if $own || length $Perennial::Executor::Environment::CGI_SET{names};
    }
    if (ref $hit && $hit->{file}) {
        @$r{qw(filename path_info hit)} = (@$hit{qw(file path_info)}, $hit);
    }
    elsif ($root) {    # Mapped when asked for (RequestRec's _map reads it), kept with the plan
        $r->{unmapped} = $plan->{unmapped} //= [$root->{dir}, $plan->{rest}];
    }
    $self->arm_close($r) if $site->{closes};
    return $r;
}

# The request is to be closed once its response has gone (psgix.cleanup): its log and cleanup
# phases run then, and the cleanups it registered. Armed when the request opens if its sections
# name log or cleanup handlers, else when a cleanup is first registered (push_handlers, pool):
# a request with neither has nothing to close, and went without the closure and four calls.
# (A server without psgix.cleanup closes every request as the response is handed on: finish.)
sub arm_close ($self, $r) {
    return if $r->{armed}++ || !$r->{env}{'psgix.cleanup'};
    push @{$r->{env}{'psgix.cleanup.handlers'}}, sub ($e) { $self->_close($r) };
    return;
}

# What the request objects of a plan know of where they run, made once per URL plan
sub _site ($self, $plan) {
    my ($set, $top) = ($plan->{set}, $self->{top});
    return {
        location      => _location($set),
        handler       => $plan->{handler},
        log           => $self->{log},
        document_root => $self->{document_root},
        dispatch      => $top ? sub ($e) { $$top->($e) } : undef,
        set           => $set,
        clean_env => ($plan->{handler} eq 'modperl' || grep { $set->{$_} } @BEFORE, @AFTER) ? 1 : 0,
        closes    => ($set->{perl_log}              || $set->{perl_cleanup})                ? 1 : 0,
        perl_env  => Perennial::Executor::Environment->group(    # Undef for none
            Perennial::Executor::Environment->perl_vars($set)
        ),
    };
}

# Whether Perennial made an answer (ErrorDocument may replace it): not a custom_response's
sub made_here ($class, $r, $res) {
    return
        ref $res eq 'ARRAY' && !$r->{documented} && !($r->{custom} && $r->{custom}{$res->[0]})
        ? 1
        : 0;
}

# Once the response is made: the log phase sees its status when the response has gone
sub finish ($self, $r, $res) {
    if (ref $res eq 'ARRAY') {
        $r->{final_status} = $res->[0];
        $r->{bytes_sent}   = Plack::Util::content_length($res->[2]);    # For a log handler
    }
    else {
        # The responder holds the request weakly: the output it is given, which the request
        # holds, holds it (and a request that is not closed after its response would be kept)
        my $inner = $res;
        Scalar::Util::weaken(my $request = $r);
        $res = sub ($respond) {
            $inner->(
                sub ($answer) {
                    if ($request) {    # bytes_sent for a log phase (a pushed one too), as Apache's
                        $request->{final_status} = $answer->[0];
                        $request->{bytes_sent}   = Plack::Util::content_length($answer->[2])
                            if defined $answer->[2];
                    }
                    my $writer = $respond->($answer);
                    $request->{out_writer} = $writer if $request && $writer;    # Streamed
                    return $writer;
                }
            );
        };
    }
    return $res if $r->{env}{'psgix.cleanup'};
    return $self->_close_after($r, $res);    # A server without psgix.cleanup: as it is handed on
}

sub _close_after ($self, $r, $res) {
    if (ref $res eq 'ARRAY') { $self->_close($r); return $res }
    return sub ($respond) {
        my @got = $res->($respond);
        $self->_close($r);
        return @got;
    };
}

# Runs the handlers of a phase; the phase's answer (OK, DECLINED, DONE or a status). MOD_PERL
# is in %ENV meanwhile, as mod_perl has it: in perl's %ENV and not in the C environment, so a
# child process does not see it (nor does Apache's); stored without the setenv that an
# assignment makes (the local that set it and the unsetenv after scanned the environment
# three times: 3.5k instructions a request), and taken out after by the outermost phase
sub run ($self, $r, $key) {
    my ($status, $run_first, $phase) = ($DECLINED, $RUN_FIRST{$key}, $DIRECTIVE{$key});
    my ($mark, $value) = (!exists $ENV{MOD_PERL}, $Perennial::ModPerl::ENV_VALUE);
    hv_store(%ENV, 'MOD_PERL', $value) if $mark;    # $value itself: the element is that variable

    # In an eval of its own, so that MOD_PERL goes whatever leaves the loop (a handler's return
    # value whose overloading dies, an exception object whose isa does): it was a local
    my $done = eval {
        for my $name (@{$r->{set}{$key} // []}) {

            # Each handler's answer as a number (a value that is not one is OK, as mod_perl
            # reads it; exit is OK too); one that dies, or cannot be found, is a 500 with the
            # reason in the log. (Here, not in a method per handler: a call is 1.5k to 3k
            # instructions.)
            my $handler = $Perennial::ModPerl::Handler::RESOLVED{$name}    # As resolve keeps it
                // $self->_resolve($r, $phase, $name);
            if (!$handler) { $status = 500; last }
            my ($rc, $err)
                = Perennial::ModPerl::run_handler($phase, $r, $handler->{code},
                defined $handler->{class} ? ($handler->{class}, $r) : $r);   # As Handler::arguments
            $rc
                = defined $err           ? _failed($r, $phase, $name, $err)
                : looks_like_number($rc) ? int $rc
                :                          $OK;
            if ($run_first ? $rc != $DECLINED : $rc != $OK && $rc != $DECLINED) {
                $status = $rc;
                last;
            }
            $status = $OK if $rc == $OK;
        }
        1;
    };
    Perennial::Executor::Environment::delete_perl_only('MOD_PERL') if $mark;
    die $@ unless $done;
    return $status;
}

# A handler named that leads nowhere: undef, and why in the log
sub _resolve ($self, $r, $phase, $name) {
    my $handler = eval { Perennial::ModPerl::Handler->resolve($name) };
    $r->log_error("$phase $name: $@") unless $handler;
    return $handler;
}

# A handler that died (or left by last): a 500, and why in the log
sub _failed ($r, $phase, $name, $err) {
    $r->log_error("$phase $name failed: " . ($err =~ s/\s+\z//r));
    $r->{died} = 1;
    return 500;
}

# A response Perennial made itself (a file, or its 404) under a request whose handlers ran
# before it: what they put in headers_out goes with a 2xx or 3xx one, and err_headers_out with
# any, as Apache sends them (a PerlFixupHandler's Cache-Control: private on a static file)
sub with_tables ($self, $r, $res) {
    return $res unless ref $res eq 'ARRAY';
    my @tables = ($res->[0] < 400 ? $r->{headers_out} : (), $r->{err_headers_out});
    my @add    = map { $_ ? $_->pairs : () } @tables;
    return $res unless @add;
    return [$res->[0], [@{$res->[1]}, @add], $res->[2]];
}

# The answer to a request that a phase ended with a status: Apache's page for it (or the
# custom_response), with err_headers_out and a redirect's Location
sub answer ($self, $r, $key, $rc) {
    _keep_env($r) if $r->{subprocess_env};    # For an ErrorDocument page's REDIRECT_* too
    my $env       = $r->{env};
    my $directive = $DIRECTIVE{$key};
    if ($rc == $DONE) {
        return [$r->status, [$r->{err_headers_out} ? $r->{err_headers_out}->pairs : ()], []];
    }
    if ($rc < 100 || $rc > 599) {
        $r->log_error(
            "$directive returned $rc, which is not OK, DECLINED, DONE or an HTTP status: ",
            $r->uri);
        $rc = 500;
    }
    $self->{log}->warn("client $env->{REMOTE_ADDR} refused by $directive ($rc): "
            . "$env->{REQUEST_METHOD} $env->{REQUEST_URI}")
        if $rc >= 400 && $rc != 500 && $self->{log};
    $r->{status} = $rc;
    return $r->unprinted_response // [$rc, [], []];
}

# The phases of @keys in turn: nothing when each went on, else the answer of the first that
# ended the request and whether Perennial made it
sub run_phases ($self, $r, @keys) {
    my $set = $r->{set};
    for my $key (grep { $set->{$_} } @keys) {
        my $rc = $self->run($r, $key);
        return (delete $r->{redirected}, 0) if $r->{redirected};    # Its internal_redirect's
        next                                if $rc == $OK || $rc == $DECLINED;
        my $res = $self->answer($r, $key, $rc);
        return ($res, $self->made_here($r, $res));
    }
    return;
}

# The log phase (the final status known), then the cleanups, then the object lets go. As in
# Apache, a request that an internal redirect made is logged as the one it came from (by that
# one's handlers), and has only its cleanups.
sub _close ($self, $r) {
    if ($r->{set}{perl_log} && !$r->{prev}) {
        local $r->{status} = $r->{final_status} // $r->{status};
        $self->run($r, 'perl_log');
    }
    $self->run($r, 'perl_cleanup') if $r->{set}{perl_cleanup};
    Perennial::ModPerl->close_request($r);
    return;
}

# The path of the last <Location> of the request's sections, as $r->location says
sub _location ($set) {
    my ($last) = reverse grep { $_->{kind} eq 'location' } @{$set->{sections} // []};
    return $last ? $last->{path} : '/';
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Phases - mod_perl's request phases, run in Apache's order

=head1 SYNOPSIS

    my $phases = Perennial::ModPerl::Phases->new(log => $log, top => \$app, document_root => $dir);
    if (Perennial::ModPerl::Phases->wanted($settings)) {
        my $r = $phases->open($env, $plan);
        my $answer = $phases->before_auth($r)
            // Perennial::Authz->decide($settings, $env, $log, undef, $phases->auth($r))
            // $phases->after_auth($r)
            // respond();
        return $phases->finish($r, $answer);
    }

=head1 DESCRIPTION

Runs C<PerlPostReadRequestHandler>, C<PerlHeaderParserHandler> (and C<PerlInitHandler>, the
same list in a section), C<PerlAccessHandler>, C<PerlAuthenHandler>, C<PerlAuthzHandler>,
C<PerlTypeHandler>, C<PerlFixupHandler>, C<PerlResponseHandler> (through
L<Perennial::Executor::Handler>), C<PerlLogHandler> and C<PerlCleanupHandler> with mod_perl 2's
return-code semantics. The log and cleanup phases run after the response has been sent and
logged (the server's C<psgix.cleanup>). A handler that dies is logged with its name and gives
a 500; a refusal (4xx) is logged with the client, the phase and the request.

=head1 METHODS

=head2 answer, arm_close, auth, before_auth, after_auth, finish, made_here, new, open, run, run_phases, wanted, with_tables

See the synopsis; C<run> runs one phase's handlers and returns its answer, C<answer> turns a
status into the response Apache would send for it.

=cut
