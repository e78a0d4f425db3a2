# A Registry script behind a fixup handler: the request object is the one the phases had
use strict;
use warnings;
use Apache2::RequestUtil ();
my $r = shift;
print "Content-Type: text/plain\n\n";
print 'note=',         $r->notes->get('fixup')                            // 'undef', "\n";
print 'from request=', Apache2::RequestUtil->request->notes->get('fixup') // 'undef', "\n";
print 'filename=',     $r->filename =~ s{.*/}{}r, "\n";
