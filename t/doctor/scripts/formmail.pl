#!/usr/bin/perl
# cgi-lib style code in a package of its own: %in filled key by key and never emptied, a
# message built with .= and never reset, a session hash set on several lines; lists emptied
# with undef on every request, loop variables assigned in every pass (not reported)
package FormMail;
use CGI;
undef @recipients;
undef %seen;
foreach $pair (split /&/, $ENV{QUERY_STRING} // '') {
    ($name, $value) = split /=/, $pair;
    $in{$name} = $value;
}
push @recipients, $_ for grep { !$seen{$_}++ } qw(webmaster sales webmaster);
foreach $field (sort keys %in) { $message .= "$field: $in{$field}\n" }
$session{visits}++;
$session{last} = time;
print "Content-Type: text/plain\n\nTo: @recipients\n$message";
