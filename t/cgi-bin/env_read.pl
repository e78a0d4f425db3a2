#!/usr/bin/perl
# Reads the request's variables and never writes %ENV, so the executor's cheap path runs
print "Content-Type: text/plain\n\n";
for my $name (qw(REQUEST_METHOD CONTENT_LENGTH CONTENT_TYPE HTTP_X_ONCE)) {
    print "$name=", (defined $ENV{$name} ? $ENV{$name} : '(unset)'), "\n";
}
