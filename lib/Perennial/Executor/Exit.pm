package Perennial::Executor::Exit;
use v5.36;
use Scalar::Util         qw(blessed);
use Perennial::ErrorText qw(error_text);

# exit in code that runs for a request (a script, a mod_perl handler, a cleanup) ends that code,
# not the worker: while $IN_REQUEST holds the worker's pid (set with local by whoever runs such
# code), exit dies with an object of this class, which the runner takes for a normal end.
# Elsewhere (the manager, a worker between requests) it is perl's exit, and so it is in a
# process that the code forked, which is a CGI script's process and must never go on as a
# worker. Compiled scripts call it through CORE::GLOBAL::exit, which must be in place before
# they compile.

our $IN_REQUEST = 0;

BEGIN {
    *CORE::GLOBAL::exit = sub : prototype(;$) ($code = 0) {
        CORE::exit($code) unless $IN_REQUEST && $IN_REQUEST == $$;
        __PACKAGE__->end_request($code);
    };
}

# Ends the code running for the request as exit does
# The exit's die: a $SIG{__DIE__} (CGI::Carp's set_die_handler, a logger's) does not see it, as
# ModPerl::Util::exit turns it off for its own
sub end_request ($class, $code = 0) {
    local $SIG{__DIE__};
    die bless {code => $code}, $class;
}

# Whether an error is an exit that ended the code
sub caught ($class, $err) { blessed $err && $err->isa(__PACKAGE__) ? 1 : 0 }

# Runs code of the request's (a script, an END block of one) as perl runs a program's main line:
# undef when it returned or called exit, else why it failed, as the log says it. A `last`,
# `next` or `redo` outside any loop of its own ends here, as the error perl gives it there
# (it would otherwise unwind into the loops of the executor and the server). Its block is
# written out, one call less on each request, in Perennial::Executor's _run_script and in
# Perennial::ModPerl's run_handler: a change here goes there too.
sub run ($code, @args) {
    my ($ok, $ran) = (0, 0);
    {
        last if $ran++;    # After a redo
        $ok  = eval { $code->(@args); 1 };
        $ran = -1;
    }
    return if $ok;
    return failure($ran, $@);
}

# Why code run as run runs it (in a bare block of one pass, $ran -1 once it went through) did
# not end well, as the log says it: undef for an exit
sub failure ($ran, $err) {
    return q{Can't "last", "next" or "redo" outside a loop block} if $ran != -1;
    return                                                        if __PACKAGE__->caught($err);
    return error_text($err);    # An object that is false is an error too: its text
}

# A process forked by the code came back to its runner (it returned, or died, instead of
# calling exit): it ends there, as a script's process ends at the end of the script, with
# perl's status for an error
sub child_ends ($class, $err = undef) {
    my $failed = defined $err && !$class->caught($err);
    print STDERR $err =~ /\n\z/ ? $err : "$err\n" if $failed;
    CORE::exit($failed ? 255 : $class->caught($err) ? $err->{code} : 0);
}

1;

__END__

=head1 NAME

Perennial::Executor::Exit - exit ends the request, not the worker

=head1 SYNOPSIS

    my $pid = local $Perennial::Executor::Exit::IN_REQUEST = $$;
    my $err = Perennial::Executor::Exit::run($script, @args);    # undef: returned or exit
    Perennial::Executor::Exit->child_ends($err) if $$ != $pid;

=cut
