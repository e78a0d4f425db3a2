package Demo::Codes;
use strict;
use warnings;
use Scalar::Util        ();
use Apache2::RequestRec ();
use APR::Pool           ();
use APR::Table          ();
use Apache2::RequestIO  ();
use Apache2::Response   ();
use Apache2::SubRequest ();
use Apache2::Const -compile =>
    qw(OK DECLINED DONE NOT_FOUND REDIRECT FORBIDDEN SERVER_ERROR HTTP_UNAUTHORIZED);

# A response handler whose answer the query string chooses: each return code and each way of
# leaving the response to Apache
sub handler {
    my $r    = shift;
    my $what = $r->args // '';
    return Apache2::Const::OK if $what eq 'empty';
    if ($what eq 'status') { $r->status(404); return Apache2::Const::OK }
    if ($what eq 'envset' || $what eq 'envread') {    # %ENV as mod_perl sets it up late
        if ($what eq 'envset') {
            $r->subprocess_env(DEMO_CARRIED => 'set');
            $r->subprocess_env;
        }
        $r->content_type('text/plain');
        $r->print('DEMO_CARRIED=', $ENV{DEMO_CARRIED} // '(unset)', "\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'childenv') {    # MOD_PERL is in %ENV, and not in a child's environment
        my $child = join ',', sort grep {/\AMOD_PERL=/} split /\n/, `env`;
        $r->content_type('text/plain');
        $r->print(
            'MOD_PERL=', $ENV{MOD_PERL} // '(unset)',
            "\n",        'MOD_PERL_API_VERSION=', $ENV{MOD_PERL_API_VERSION} // '(unset)',
            "\n",        'child: ', ($child eq '' ? '(none)' : $child), "\n"
        );
        return Apache2::Const::OK;
    }
    if ($what eq 'badrc') {       # A return value that cannot be made a number: its overload dies
        $r->content_type('text/plain');
        $r->print("bad\n");
        return bless {}, 'Demo::Codes::BadNumber';
    }
    if ($what eq 'ownmodperl') {    # Set by the handler itself, so in the C environment too
        $ENV{MOD_PERL} = 'mod_perl/own';
        $r->content_type('text/plain');
        $r->print("set\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'fork') {          # Perennial only: under Apache the child would go on as a server
        my $pid = fork // die "fork: $!";
        return Apache2::Const::OK unless $pid;    # The child returns, as a handler does
        waitpid $pid, 0;
        $r->content_type('text/plain');
        $r->print('child status ', $? >> 8, "\n");
        return Apache2::Const::OK;
    }
    return Apache2::Const::NOT_FOUND if $what eq 'notfound';
    if ($what eq 'redirect') {
        $r->headers_out->set(Location => 'http://localhost/elsewhere');
        return Apache2::Const::REDIRECT;
    }
    if ($what eq 'custom') {
        $r->custom_response(Apache2::Const::FORBIDDEN, "Come back tomorrow\n");
        return Apache2::Const::FORBIDDEN;
    }
    if ($what eq 'customurl') {
        $r->custom_response(Apache2::Const::FORBIDDEN, '/hello/from-custom');
        return Apache2::Const::FORBIDDEN;
    }
    if ($what eq 'customscript') {
        $r->custom_response(Apache2::Const::FORBIDDEN, '/plainreg/whoami.pl');
        return Apache2::Const::FORBIDDEN;
    }
    if ($what eq 'custom401') {
        $r->err_headers_out->set('WWW-Authenticate' => 'Basic realm="codes"');
        $r->custom_response(Apache2::Const::HTTP_UNAUTHORIZED, "Who are you?\n");
        return Apache2::Const::HTTP_UNAUTHORIZED;
    }
    if ($what eq 'internal') {
        $r->internal_redirect('/hello/inside?x=1');
        return Apache2::Const::OK;
    }
    return Apache2::Const::DECLINED if $what eq 'declined';
    if ($what eq 'done') {
        $r->content_type('text/plain');
        $r->print("done\n");
        return Apache2::Const::DONE;
    }
    die "handler died on purpose\n" if $what eq 'die';
    if ($what eq 'cleanups')
    {    # pool cleanups: each runs, in APR's order, after one that left by last
        my $file = $r->dir_config('LogTo');
        my $note = sub {
            open my $fh, '>>', $file or die "Can't open $file: $!";
            print $fh "$_[0]\n";
            close $fh;
        };
        $r->pool->cleanup_register(sub { $note->('pool cleanup registered first') });
        $r->pool->cleanup_register(sub {last});
        $r->pool->cleanup_register(sub { $note->('pool cleanup registered last') });
        $r->content_type('text/plain');
        $r->print("cleanups\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'pushed') {    # A cleanup handler pushed by a handler that has no other phase
        my $file = $r->dir_config('LogTo');
        $r->push_handlers(
            PerlCleanupHandler => sub {
                open my $fh, '>>', $file or die "Can't open $file: $!";
                print $fh "cleanup handler pushed\n";
                close $fh;
                return Apache2::Const::OK;
            }
        );
        $r->content_type('text/plain');
        $r->print("pushed\n");
        return Apache2::Const::OK;
    }
    if ($what =~ /\Aweak/) {    # Whether the object of the last such request is gone by now
        my $last = defined $Demo::Codes::LAST ? 'kept' : 'gone';
        Scalar::Util::weaken($Demo::Codes::LAST = $r);
        $r->content_type('text/plain');
        $r->print("the last request object: $last\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'badhead') {    # A header value with a line end in it: a 500, and why in the log
        $r->headers_out->set('X-Bad' => "a\r\nX-Injected: yes");
        $r->content_type('text/plain');
        return Apache2::Const::OK;
    }
    if ($what eq 'badname') {    # A header name that is no token: a 500, and why in the log
        $r->headers_out->set('Bad Name' => 'x');
        $r->content_type('text/plain');
        $r->print("bad name\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'etag') {       # The ETag of a response that is no file
        $r->set_etag;
        $r->content_type('text/plain');
        $r->print("etag\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'falseobj') {    # An exception object that is false: still a death (Perennial)
        die bless {}, 'Demo::Codes::False';
    }
    if ($what eq 'last') {        # loop control outside a loop: the error perl gives, a 500
        $r->content_type('text/plain');
        last;
    }
    if ($what eq 'printhead') {
        $r->print("Content-Type: text/x-printed\n\nbody\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'stdout') {
        print "Content-Type: text/x-stdout\n\nby print\n";
        return Apache2::Const::OK;
    }
    if ($what eq 'one') { $r->content_type('text/plain'); $r->print("one\n"); return 1 }
    if ($what eq 'printed') {    # What print returns: the bytes, or zero but true for none
        $r->content_type('text/plain');
        my @sent = ($r->print('four'), $r->print(''), $r->print(1, 22));
        $r->print("\nsent @sent\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'typed') {      # A status and a type of its own, before the first print
        $r->status(203);
        $r->content_type('text/x-typed');
        $r->print("typed\n");
        return Apache2::Const::OK;
    }
    if ($what eq 'err_headers') {
        $r->err_headers_out->set('X-Err' => 'kept');
        $r->headers_out->set('X-Out' => 'dropped');
        return Apache2::Const::NOT_FOUND;
    }
    $r->content_type('text/plain');
    $r->print("default\n");
    return Apache2::Const::OK;
}

# A value whose number dies
package Demo::Codes::BadNumber;
use overload '0+' => sub { die "no number here\n" }, '""' => sub {'bad number'}, fallback => 0;

# An exception that is false as a boolean, and says so as a string
package Demo::Codes::False;
use overload bool => sub {0}, '""' => sub {'a false exception object'}, fallback => 1;

1;
