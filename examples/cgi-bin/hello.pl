#!/usr/bin/perl
# The seed talk's hello.pl: the same file under /cgi-bin, /perlrun and /registry
use CGI;

my $q = CGI->new;
print $q->header('text/html');
print <<"EOF";
<html><body>
<h1>Hello world!</h1>
<pre>
GATEWAY_INTERFACE: $ENV{GATEWAY_INTERFACE}
PERENNIAL: @{[ $ENV{PERENNIAL} // '(not set: plain CGI)' ]}
</pre>
</body></html>
EOF
