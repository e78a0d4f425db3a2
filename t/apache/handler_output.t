use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test         qw(scratch_dir write_file);
use Perennial::Test::Apache qw(answer_of apache_and_perennial apache_available);

# A handler module's head is taken when its body first leaves, as mod_perl's buffer has it: a
# header, a status or a content type set after a print still goes with the response, until the
# body passes the buffer (8 KB) or the handler flushes it. Under modperl and perl-script, each
# answer compared with Apache + mod_perl's. And a PerlFixupHandler's internal_redirect, then
# DONE: the other URL's response is the answer.
plan skip_all => 'apache2 and mod_perl are not installed (make test installs them)'
    unless apache_available();

my $dir = scratch_dir();
write_file("$dir/lib/Late.pm", <<'PM');
package Late;
use strict;
use warnings;
use Apache2::RequestRec ();
use Apache2::RequestIO ();
use Apache2::Response ();
use APR::Table ();
use Apache2::Const -compile => qw(OK DONE);
use Apache2::SubRequest ();

sub late {    # Headers after the first print
    my $r = shift;
    $r->content_type('text/plain');
    $r->print("a\n");
    $r->headers_out->set('X-Late' => 1);
    $r->err_headers_out->set('X-Err' => 1);
    print "b\n";    # STDOUT: the response under perl-script
    return Apache2::Const::OK;
}
sub type {    # The content type, set after the body
    my $r = shift;
    $r->print("a\n");
    $r->content_type('text/x-late');
    return Apache2::Const::OK;
}
sub status {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print("a\n");
    $r->status(202);
    return Apache2::Const::OK;
}
sub flushed {    # Gone with the head: the header set after is not sent
    my $r = shift;
    $r->content_type('text/plain');
    $r->print("a\n");
    $r->rflush;
    $r->headers_out->set('X-Late' => 1);
    $r->print("b\n");
    return Apache2::Const::OK;
}
sub big {    # Past the buffer: the head has gone too
    my $r = shift;
    $r->content_type('text/plain');
    $r->print('x' x 9000, "\n");
    $r->headers_out->set('X-Late' => 1);
    return Apache2::Const::OK;
}
sub onward {    # A fixup that hands the request to another URL, as the idiom is
    my $r = shift;
    $r->internal_redirect('/late');
    return Apache2::Const::DONE;
}
sub cgi_head {    # A CGI head given to the object, between two prints
    my $r = shift;
    $r->print("a\n");
    my $head = "Status: 203\nX-Late: 1\nContent-Type: text/x-c\n\n";    # mod_perl writes to it
    $r->send_cgi_header($head);
    $r->print("b\n");
    return Apache2::Const::OK;
}
sub autoflushed {    # $| sends the head with the first print: what is set after is not sent
    my $r = shift;
    local $| = 1;
    $r->content_type('text/plain');
    print "a\n";
    $r->status(202);
    $r->headers_out->set('X-Late' => 1);
    print "b\n";
    return Apache2::Const::OK;
}
1;
PM
system('chmod', '-R', 'a+rX', $dir) == 0 or die;
my @names = qw(late type status flushed big cgi_head autoflushed);
my $conf  = "PerlSwitches -I$dir/lib\nPerlModule Late\n";
for my $name (@names) {
    $conf
        .= "<Location /$name>\n    SetHandler modperl\n    PerlResponseHandler Late::$name\n"
        . "</Location>\n<Location /script/$name>\n    SetHandler perl-script\n"
        . "    PerlResponseHandler Late::$name\n</Location>\n";
}
$conf .= "<Location /fixed>\n    PerlFixupHandler Late::onward\n</Location>\n";
my ($apid, $aport, $srv) = apache_and_perennial($dir, $conf);

my %compared = map { ($_ => 1) } qw(content-type x-late x-err);
for my $path ((map { ("/$_", "/script/$_") } @names), '/fixed/anything') {
    my $want = answer_of($aport,     \%compared, GET => $path);
    my $got  = answer_of($srv->port, \%compared, GET => $path);
    is_deeply $got, $want,
        "$path: $want->{status} @{$want->{head}}, " . length($want->{body}) . ' bytes, as Apache';
}

$srv->stop;
kill 'TERM', $apid;
done_testing;
