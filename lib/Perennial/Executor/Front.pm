package Perennial::Executor::Front;
use v5.36;
use Exporter qw(import);
use Perennial::ErrorDocument;
use Perennial::ErrorPage;
use Perennial::Subrequest;
use Perennial::Watchdog;

# What every way of running a script does around it, for the resident executor
# (Perennial::Executor: Registry and PerlRun) and mod_cgi's (Perennial::Executor::CGI) alike,
# each of which holds one: the request's deadline armed, Options ExecCGI, the script found
# ready (its `prepare`) or refused with the reason in the log, the run (its `respond`), and a
# local redirect (a CGI Location: /path) answered as an internal one.

our @EXPORT_OK = qw(where);

# log; exec_cgi (Options ExecCGI, on unless told); limits, the watchdog's [deadline, slow];
# dispatch, a reference to the dispatcher a local redirect goes back through; environment, the
# Perennial::Executor::Environment that puts a request's CGI variables in %ENV (a resident
# executor's: mod_cgi's scripts get theirs in their own process)
sub new ($class, %args) {
    return bless {
        log         => $args{log},
        exec_cgi    => $args{exec_cgi} // 1,
        limits      => $args{limits},
        dispatch    => $args{dispatch},
        set         => $args{set},
        environment => $args{environment},
    }, $class;
}

# A script already found: a PSGI response (refused) or the delayed one that runs it through
# $runner, which has respond($script, $hit, $env, $respond, $r); $scripts has prepare($hit),
# the runner's own unless it names the object that does it (one Perl call less a request)
sub serve ($self, $runner, $env, $hit, $r = undef, $scripts = $runner) {
    Perennial::Watchdog::arm_for($env, $self->{limits}) if $self->{limits};
    if (!$self->{exec_cgi}) {
        $self->{log}->error("Options ExecCGI is off in this directory: $hit->{file}");
        return error_page(403, $env);
    }

    # The request's CGI variables first: a compile sees them, as under mod_perl, where %ENV is set
    # up before the handler compiles (a BEGIN block, `use lib "$ENV{DOCUMENT_ROOT}/lib"`), and
    # the script runs with them
    $self->{environment}->put($env, $hit) if $self->{environment};
    my ($script, $err, $status) = $scripts->prepare($hit);
    if (!$script) {
        $self->{log}->error(where($hit, $env) . ": $err");
        return error_page($status // 500, $env);
    }
    return sub ($respond) { $runner->respond($script, $hit, $env, $respond, $r) };
}

# The executor as a PSGI application of its own: its resolver finds the script below its
# directory (the dispatcher, when there is one, has found it already and calls serve)
sub app ($self, $runner, $resolver, $scripts = $runner) {
    return sub ($env) {
        my $hit = $resolver->resolve($env);
        return ref $hit ? $self->serve($runner, $env, $hit, undef, $scripts) : error_page($hit);
    };
}

# A local redirect (RFC 3875's Location: /path with nothing else): the dispatcher answers the
# new path in the same request, as Apache's internal redirect
sub internal_redirect ($self, $env, $location, $respond) {
    my $top = $self->{dispatch} && ${$self->{dispatch}};
    my $new = $top
        && Perennial::Subrequest->redirect($env, $location,
        Perennial::Subrequest->redirected_from($env));
    if (!$new) {
        $self->{log}->error("local redirect to $location not followed ("
                . ($top ? 'too many' : 'no dispatcher')
                . ')');
        return $respond->(error_page(500, $env));
    }
    my $res = $top->($new);
    return ref $res eq 'CODE' ? $res->($respond) : $respond->($res);
}

# An error a script's run met once its response was delayed (a script that died, or could not
# start, or gave no head): the section's ErrorDocument for the status, as Apache's ap_die gives
# it after mod_cgi or ModPerl::Registry, else Apache's page; given to the responder
sub answer_error ($self, $env, $status, $respond) {
    my $top  = $self->{dispatch} && ${$self->{dispatch}};
    my $page = error_page($status, $env);
    $page = Perennial::ErrorDocument->apply($env, $self->{set}, $page, $top)
        if $top && Perennial::ErrorDocument->applies($env, $self->{set}, $status);
    return ref $page eq 'CODE' ? $page->($respond) : $respond->($page);
}

sub error_page ($status, $env = undef) { Perennial::ErrorPage->response($status, $env) }

# The script and the request, for the log
sub where ($hit, $env) {"$hit->{file} (request $env->{REQUEST_METHOD} $env->{REQUEST_URI})"}

1;

__END__

=head1 NAME

Perennial::Executor::Front - what every executor does around running a script

=head1 SYNOPSIS

    my $front = Perennial::Executor::Front->new(log => $log, exec_cgi => 1, limits => $limits,
        dispatch => \$dispatcher);
    return $front->serve($executor, $env, $hit, $r);    # $executor->prepare, ->respond
    return $front->internal_redirect($env, '/other', $respond);
    use Perennial::Executor::Front qw(where);

=head1 DESCRIPTION

The resident executor and mod_cgi's are two classes that each hold one of these (composition,
not a common parent): C<serve> arms the request's deadline (L<Perennial::Watchdog>), refuses a
directory without C<Options ExecCGI> (403), asks the executor to C<prepare> the script (a 403
or 500 with the reason in the log when it cannot) and returns the delayed response that runs it
through the executor's C<respond>. C<internal_redirect> answers a script's local redirect
through the dispatcher, in the same request.

=head1 METHODS

=head2 new

Takes C<log>, C<exec_cgi> (on unless told), C<limits>, C<dispatch>, C<set> (the section's
merged settings, for its ErrorDocument lines) and C<environment> (the
L<Perennial::Executor::Environment> whose C<put> sets C<%ENV> before C<prepare>, so that a
compile sees the request's CGI variables, as under mod_perl); other keys are ignored,
so an executor can hand it its own arguments.

=head2 serve

    return $front->serve($executor, $env, $hit, $r);

=head2 app

    my $psgi = $front->app($executor, $resolver);    # the executor's to_app

=head2 answer_error

    return $front->answer_error($env, 500, $respond);

The section's ErrorDocument for the status, else Apache's page, as the response.

=head2 internal_redirect

    return $front->internal_redirect($env, $location, $respond);

=head1 FUNCTIONS

=head2 error_page, where

Apache's page for a status (L<Perennial::ErrorPage>); a script and its request, for a log line.

=cut
