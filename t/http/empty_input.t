use v5.36;
use lib 't/lib';
use Test::More;
use HTTP::Tiny;
use Perennial::Test          qw(start_server);
use Perennial::Test::Scripts qw(start_script_server);

# A request without a body reads nothing from psgi.input, whatever an earlier request did to
# its own: the worker keeps one empty in-memory handle for such requests, and makes a new one
# when a request closed it or opened it again on a file or a string (a script's STDIN is its
# IO).
# One worker, so that every request meets what the one before it left.

# With an access log and without: the loop in C looks at the input itself only without one
for my $logged (1, 0) {
    my $with = $logged ? 'with an access log' : 'without one';
    my $srv  = start_server(app => 'input.psgi', workers => 1, access_log => $logged);
    is $srv->get('/')->{content}, 'read 0 []', "$with: an empty body reads as empty";
    for my $what (qw(close reopen binmode)) {
        $srv->get("/?$what");
        is $srv->get('/')->{content}, 'read 0 []',
            "$with: after a request that did $what to it: empty";
    }
    my $post = HTTP::Tiny->new(keep_alive => 0)
        ->post('http://127.0.0.1:' . $srv->port . '/', {content => 'abc'});
    is $post->{content},          'read 3 [abc]', "$with: a body is its own";
    is $srv->get('/')->{content}, 'read 0 []',    "$with: and the next without one is empty again";
    unlike $srv->error_log, qr/closed filehandle|on unopened/,
        "$with: no warning of a closed handle";
    $srv->stop;
}

my $scripts = start_script_server();
for my $mode (qw(perlrun registry)) {
    for my $what (qw(reopen close string)) {
        like $scripts->get("/$mode/stdin_reopen.pl?$what")->{content}, qr/\Aread 0 \[\]/,
            "/$mode: STDIN empty before the script does $what to it";
        like $scripts->get("/$mode/stdin_reopen.pl")->{content}, qr/\Aread 0 \[\]/,
            "/$mode: and the next request's STDIN is empty, not what it was opened on";
    }
}
$scripts->stop;

done_testing;
