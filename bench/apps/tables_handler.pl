# The same answer as a site's handler usually makes it: the query string and a request header
# read, a header of its own set, the same file for Apache's mod_perl and for Perennial
# (bench/instructions.pl --what handler, at /handler/tables)
package Bench::TablesHandler;
use v5.36;
use Apache2::RequestRec ();
use Apache2::RequestIO  ();
use APR::Table          ();
use Apache2::Const -compile => qw(OK);

sub handler ($r) {
    my %args  = map { split /=/, $_, 2 } split /&/, $r->args // '';
    my $agent = $r->headers_in->get('User-Agent') // 'nobody';
    $r->headers_out->set('Cache-Control' => 'no-cache');
    $r->content_type('text/plain');
    $r->print('Hello, ', $args{name} // 'you', ' (', length $agent, ")\n");
    return Apache2::Const::OK;
}

1;
