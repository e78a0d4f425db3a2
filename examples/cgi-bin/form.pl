#!/usr/bin/perl -w
# A POST form: the parameters of one request never bleed into the next
use CGI;
use strict;

my $q    = CGI->new;
my $name = $q->param('name');
print $q->header(-type => 'text/html', -charset => 'utf-8');
print "<!doctype html><html><body>\n";
print defined $name ? "<p>Hello, " . $q->escapeHTML($name) . "!</p>\n" : "<p>No name yet.</p>\n";
print <<'HTML';
<form method="post"><input name="name"> <button>Send</button></form>
</body></html>
HTML
