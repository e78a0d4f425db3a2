use v5.36;
use POSIX ();

# Ends the worker in the middle of a request: /segv (a segmentation fault), /exit (_exit, no
# cleanup at all); anything else answers with the worker's pid
sub ($env) {
    kill 'SEGV', $$    if $env->{PATH_INFO} eq '/segv';
    POSIX::_exit(3)    if $env->{PATH_INFO} eq '/exit';
    return [200, ['Content-Type' => 'text/plain'], [$$]];
};
