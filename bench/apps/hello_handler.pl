package Bench::HelloHandler;
use v5.36;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use Apache2::Const -compile => qw(OK);

# The hello of a mod_perl handler module, the same file for Apache's mod_perl and for Perennial
# (PerlRequire, then PerlResponseHandler Bench::HelloHandler at /handler)
sub handler ($r) {
    $r->content_type('text/plain');
    $r->print("Hello\n");
    return Apache2::Const::OK;
}

1;
