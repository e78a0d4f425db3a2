package Perennial::Executor::Handler;
use v5.36;
use Perennial::ModPerl::Const;
use Perennial::Executor::Environment;
use Perennial::Executor::Handles qw(stdout_io open_stdout close_stdout use_io);
use Perennial::Executor::Output;
use Perennial::Watchdog;

# The response phase of a mod_perl handler module (SetHandler modperl or perl-script with
# PerlResponseHandler My::Handler): the handlers run with the request object the earlier phases
# had, and what they return becomes the response as Apache makes it. The body is what they
# print through $r (and, under perl-script, to STDOUT); the head is the one set through $r
# (with PerlOptions +ParseHeaders, a printed CGI head is read over it). OK or DONE: the
# response as made (with nothing printed, the head alone); DECLINED with nothing printed: the
# file the URL maps to, as Apache's default handler serves it; an HTTP status with nothing
# printed: Apache's page for it. Under perl-script, %ENV holds the CGI variables (unless
# PerlSetupEnv Off) and STDIN reads the request body, as mod_perl sets them up.

my ($OK, $DECLINED, $DONE)
    = (Apache2::Const::OK(), Apache2::Const::DECLINED(), Apache2::Const::DONE());

sub new ($class, %args) {
    return bless {
        phases      => $args{phases},
        limits      => $args{limits},
        perl_script => ($args{handler} // '') eq 'perl-script' ? 1 : 0,
        env         => Perennial::Executor::Environment->new(%args),
        hits        => {},
        stdout_io   => stdout_io(),
    }, $class;
}

# The response, delayed ($declined->($env) serves the URL as the default handler would): a small
# closure that hands it to _respond. A closure with the whole response phase in it had a pad of
# all its lexicals to make and free on each request, 4k instructions more.
sub serve ($self, $env, $r, $declined) {
    Perennial::Watchdog::arm_for($env, $self->{limits}) if $self->{limits};
    return sub ($respond) { $self->_respond($env, $r, $declined, $respond) };
}

# The handlers run (under perl-script through _run), and what they return becomes the response. A
# handler that died ends the phase with 500 (Perennial::ModPerl::Phases), never OK or DONE.
sub _respond ($self, $env, $r, $declined, $respond) {
    my $out = Perennial::Executor::Output->for_request($respond, $r);
    @$r{qw(out module environment hits)} = ($out, 1, $self->{env}, $self->{hits});    # cgi_hit's
    my $rc
        = $self->{perl_script}
        ? $self->_run($env, $r, $out)
        : $self->{phases}->run($r, 'perl_response');    # %ENV left clean
    return if $out->detach_request;                     # True: $r->internal_redirect answered
    if ($rc == $OK || $rc == $DONE) {
        my $bad = $out->finish($r) or return;           # With the object's head, if none printed
        return $self->_bad_output($r, $bad, $respond);
    }
    return $self->_after_output($r, $out, $rc, $respond) if $out->printed;
    my $res
        = $rc == $DECLINED ? $declined->($env) : $self->{phases}->answer($r, perl_response => $rc);
    return ref $res eq 'CODE' ? $res->($respond) : $respond->($res);
}

# What was printed goes out as it is; a handler that failed after its body began ends the
# connection, one that failed before has its output replaced by the 500 answer
sub _after_output ($self, $r, $out, $rc, $respond) {
    if ($r->{died}) {
        die "PerlResponseHandler failed after its response began\n" if $out->started;
        my $res = $self->{phases}->answer($r, perl_response => 500);
        return ref $res eq 'CODE' ? $res->($respond) : $respond->($res);
    }
    $r->log_error("PerlResponseHandler returned $rc after it sent a body: the body stands")
        if $rc != $DECLINED;
    my $bad = $out->finish($r) or return;    # With the object's head, if none was printed
    return $self->_bad_output($r, $bad, $respond);
}

# An output that could not be made a response (a bad head): a 500, and why in the log
sub _bad_output ($self, $r, $bad, $respond) {
    $r->log_error("PerlResponseHandler: $bad");
    $r->{status} = 500;
    my $res = $r->unprinted_response;        # Its custom_response, or the ErrorDocument, for it
    return ref $res eq 'CODE' ? $res->($respond) : $respond->($res);
}

# The handlers run with what perl-script sets up around them: the CGI variables (PATH_INFO
# only with a value, as mod_perl sets them), STDIN, and STDOUT into the response
sub _run ($self, $env, $r, $out) {
    my $phases = $self->{phases};
    $self->{env}->put($env, $r->cgi_hit);
    local *STDIN;
    use_io(\*STDIN, $env->{'psgi.input'});    # Without emptying perl's cache of class names
    local *STDOUT;
    my $selected = open_stdout(\*STDOUT, $self->{stdout_io}, $out);    # No autoflush, its output
    my $rc       = $phases->run($r, 'perl_response');
    my $opened   = close_stdout(\*STDOUT, $self->{stdout_io}, $out, $selected);
    CORE::close(*STDOUT) if $opened;    # A file the handler opened on it itself
    return $rc;
}

1;

__END__

=head1 NAME

Perennial::Executor::Handler - the response phase of a mod_perl handler module

=head1 SYNOPSIS

    my $executor = Perennial::Executor::Handler->new(phases => $phases, handler => 'modperl',
        setup_env => 1);
    my $res = $executor->serve($env, $r, sub ($env) { $static_answer });

=head1 DESCRIPTION

Runs the C<PerlResponseHandler> list of the request (see L<Perennial::ModPerl::Phases>) and
answers as Apache does for each return code: see the comment at the top of the module and
L<Perennial::Manual::Scripts>.

=cut
