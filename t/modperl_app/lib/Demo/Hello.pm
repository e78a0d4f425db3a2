package Demo::Hello;
use strict;
use warnings;
use Apache2::RequestRec  ();
use APR::Table           ();
use Apache2::RequestIO   ();
use Apache2::RequestUtil ();
use Apache2::Const -compile => qw(OK);

# A response handler: what the request looks like from inside it
sub handler {
    my $r = shift;
    $r->content_type('text/plain');
    $r->headers_out->set('X-Handler' => __PACKAGE__);
    $r->print(
        join '',
        map { "$_->[0]=" . ($_->[1] // 'undef') . "\n" } [uri => $r->uri],
        [path_info     => $r->path_info],
        [location      => $r->location],
        [handler       => $r->handler],
        [greeting      => $r->dir_config('Greeting')],
        [user          => $r->user],
        [note          => $r->notes->get('fixup')],
        [method        => $r->method],
        [args          => scalar $r->args],
        [is_initial    => $r->is_initial_req],
        [prev_uri      => $r->prev && $r->prev->uri],
        [env_mod_perl  => $ENV{MOD_PERL} ? 'set' : 'unset'],
        [env_path_info => $ENV{PATH_INFO}]
    );
    return Apache2::Const::OK;
}

# Demo::Hello::plain: a sub named whole, as PerlResponseHandler Demo::Hello::plain
sub plain {
    my $r = shift;
    $r->content_type('text/plain');
    $r->print("plain sub\n");
    return Apache2::Const::OK;
}

1;
