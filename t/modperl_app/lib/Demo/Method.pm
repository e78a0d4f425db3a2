package Demo::Method;
use strict;
use warnings;
use Apache2::RequestRec ();
use APR::Table          ();
use Apache2::RequestIO  ();
use Apache2::Const -compile => qw(OK);

our @ISA = ('Demo::Method::Base');

package Demo::Method::Base;

# A method handler: called as a class method, and inherited
sub handler : method {
    my ($class, $r) = @_;
    $r->content_type('text/plain');
    $r->print("class=$class ref=" . ref($r) . "\n");
    return Apache2::Const::OK;
}

sub other {
    my ($class, $r) = @_;
    $r->content_type('text/plain');
    $r->print("other class=$class\n");
    return Apache2::Const::OK;
}

1;
