# A plain Registry script (no phases where it is) that a handler's custom_response leads to: it
# is its own request, with the status of the error it stands for
use strict;
use warnings;
my $r = shift;
print "Content-Type: text/plain\n\n";
print 'uri=', $r->uri, ' status=', $r->status, ' prev=', ($r->prev ? $r->prev->uri : 'none'),
    ' greeting=', $r->dir_config('Greeting') // 'undef', "\n";
