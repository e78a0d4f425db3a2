#!/usr/bin/perl
# A mod_perl 2 script: the request object instead of printed headers
use Apache2::RequestUtil ();
use Apache2::RequestRec  ();
my $r    = Apache2::RequestUtil->request;
my %args = map { split /=/, $_, 2 } split /&/, $r->args;    # mod_perl 2 gives the string
$r->content_type('text/plain');
$r->headers_out->set('X-Served-By' => 'request object');
$r->err_headers_out->add('Set-Cookie' => 'a=1');
$r->err_headers_out->add('Set-Cookie' => 'b=2');
$r->status(202) if $args{accept};
print 'method=', $r->method, ' uri=', $r->uri, ' args=', scalar $r->args, ' x=',
    $r->headers_in->{'x-test'} // '', ' file=', ($r->filename =~ m{([^/]+)\z})[0], "\n";
$r->print("printed through \$r\n");
