#!/usr/bin/perl
print "Content-Type: text/plain\n\n";
for my $name (
    qw(GATEWAY_INTERFACE REQUEST_METHOD SCRIPT_NAME PATH_INFO QUERY_STRING SERVER_PROTOCOL HTTP_X_TEST HTTP_PROXY LEAKED)
    )
{
    print "$name=", (defined $ENV{$name} ? $ENV{$name} : '(unset)'), "\n";
}
print "SERVER_SOFTWARE=", ($ENV{SERVER_SOFTWARE} =~ /^Perennial/ ? 'Perennial' : 'other'), "\n";
print "child sees: ", `echo \$GATEWAY_INTERFACE`;
$ENV{LEAKED} = 'yes';
