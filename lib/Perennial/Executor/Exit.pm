package Perennial::Executor::Exit;
use v5.36;
use Scalar::Util qw(blessed);

# exit in code that runs for a request (a script, a mod_perl handler, a cleanup) ends that code,
# not the worker: while $IN_REQUEST is true (set with local by whoever runs such code), exit
# dies with an object of this class, which the runner takes for a normal end. Elsewhere (the
# manager, a worker between requests, a forked child) it is perl's exit. Compiled scripts call
# it through CORE::GLOBAL::exit, which must be in place before they compile.

our $IN_REQUEST = 0;

BEGIN {
    *CORE::GLOBAL::exit = sub : prototype(;$) ($code = 0) {
        CORE::exit($code) unless $IN_REQUEST;
        die bless {code => $code}, __PACKAGE__;
    };
}

# Whether an error is an exit that ended the code
sub caught ($class, $err) { blessed $err && $err->isa(__PACKAGE__) ? 1 : 0 }

1;

__END__

=head1 NAME

Perennial::Executor::Exit - exit ends the request, not the worker

=head1 SYNOPSIS

    local $Perennial::Executor::Exit::IN_REQUEST = 1;
    my $ok = eval { $script->(); 1 };
    my $failed = !$ok && !Perennial::Executor::Exit->caught($@);

=cut
