# CGI.pm loaded at start (PerlModule CGI), with MOD_PERL set: its header, a status of its own,
# a redirect, a cookie, the query string, and $q->r, the request object (under Apache CGI.pm
# works through it; under Perennial it reads the CGI variables, and $q->r is still there)
use strict;
use warnings;
use CGI;
my $q    = CGI->new;
my $what = $q->param('what') // '';
if ($what eq 'redirect') {
    print $q->redirect('/hello');
}
elsif ($what eq 'crlf' || $what eq 'utf8') {    # STDOUT's layers apply to the body only
    binmode STDOUT, $what eq 'crlf' ? ':crlf' : ':encoding(UTF-8)';
    print $q->header(-type => 'text/plain', -attachment => "caf\xc3\xa9.txt");
    print "hi\n";
}
elsif ($what eq 'status') {
    print $q->header(-status => '404 Not Here', -type => 'text/plain');
    print "not here\n";
}
else {
    print $q->header(
        -type    => 'text/plain',
        -charset => 'utf-8',
        -cookie  => $q->cookie(-name => 'seen', -value => 'yes', -path => '/')
    );
    print "what=$what mod_perl=$CGI::MOD_PERL r=", ref($q->r), ' uri=', $q->r->uri, ' names=',
        join(',', $q->param), "\n";
}
