package Perennial;
use v5.36;

our $VERSION = '0.1.0';    # Three numbers: monitoring written for Apache reads them so

1;

__END__

=head1 NAME

Perennial - a preforking Perl application server with Apache's process management

=head1 SYNOPSIS

    perennial serve --workers 4 --listen 127.0.0.1:8529 app.psgi
    perennial serve -c perennial.conf
    perennial configtest -c perennial.conf
    perennial status --pid perennial.pid
    perennial graceful --pid perennial.pid

=head1 DESCRIPTION

Perennial keeps Perl resident in a pool of preforked workers managed as Apache's prefork MPM
manages its children (StartServers, MinSpareServers, MaxSpareServers, MaxClients,
MaxRequestsPerChild), speaks HTTP/1.1 itself, and serves PSGI applications mounted at
C<< <Location> >> paths. Its settings are described in L<Perennial::Config>; the manager's
signals in L<Perennial::Prefork>.

=head1 SEE ALSO

L<Perennial::Config>, L<Perennial::Prefork>, L<Perennial::Connection>, L<Plack::Handler::Perennial>.

=head1 LICENSE

Copyright the Perennial authors. This library is free software; you can redistribute it and/or
modify it under the same terms as Perl itself.

=cut
