package Perennial::Router;
use v5.36;
use Carp                      qw(croak);
use Perennial::HTTP::Response qw(plain_response);

# The <Location> table, built once: longest path first, matched on whole path segments.
# No filesystem calls: a location's application was loaded before the table was built.

sub new ($class, %args) {
    my @routes = sort { length $b->{path} <=> length $a->{path} }
        map { {path => $_->[0] =~ s{/+\z}{}r, app => $_->[1]} } @{$args{routes} // []};
    croak 'Router needs at least one route' unless @routes;
    return bless {routes => \@routes}, $class;
}

sub to_app ($self) {
    my @routes = @{$self->{routes}};
    return $routes[0]{app} if @routes == 1 && $routes[0]{path} eq '';
    return sub ($env) {
        my $path = $env->{PATH_INFO};
        for my $route (@routes) {
            my $prefix = $route->{path};
            next
                if length $prefix
                && !(index($path, $prefix) == 0
                && (length $path == length $prefix || substr($path, length $prefix, 1) eq '/'));
            local $env->{SCRIPT_NAME} = $env->{SCRIPT_NAME} . $prefix;
            local $env->{PATH_INFO}   = substr $path, length $prefix;
            return $route->{app}->($env);
        }
        return plain_response(404, "Not Found\n");
    };
}

1;

__END__

=head1 NAME

Perennial::Router - map URL paths to PSGI applications, longest match first

=head1 SYNOPSIS

    my $app = Perennial::Router->new(routes => [['/' => $site], ['/api' => $api]])->to_app;

=head1 DESCRIPTION

Each location path owns itself and everything below it on a segment boundary: C</api>
matches C</api> and C</api/users>, not C</apis>. The matched path moves from PATH_INFO to
SCRIPT_NAME, as Plack::App::URLMap does. A request that matches nothing gets 404. With a
single location at C</> the application is returned as it is, at no cost per request.

=head1 METHODS

=head2 new

    my $router = Perennial::Router->new(routes => [[$path, $app], ...]);

=head2 to_app

    my $app = $router->to_app;

The PSGI application that dispatches.

=cut
