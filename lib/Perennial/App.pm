package Perennial::App;
use v5.36;
use Plack::Util  ();
use Scalar::Util ();
use Perennial::Router;

# Builds the one PSGI application a server runs from the configuration: each location's
# application file, loaded in the manager so that workers share it, behind the Router.

sub build ($class, $config) {
    my @routes;
    for my $loc (@{$config->locations}) {
        my $app = _load($loc->{app_path}, "$loc->{file} line $loc->{line}: ");
        push @routes, [$loc->{path}, $app];
    }
    push @routes, ['/', _load($config->app, '')] if defined $config->app;
    die "Nothing to serve: give an app.psgi or a config file with <Location> blocks\n"
        unless @routes;
    my $app = Perennial::Router->new(routes => \@routes)->to_app;
    if ($config->environment eq 'development') {
        require Plack::Middleware::Lint;
        require Plack::Middleware::StackTrace;
        $app = Plack::Middleware::StackTrace->wrap(Plack::Middleware::Lint->wrap($app));
    }
    return $app;
}

sub _load ($path, $where) {
    die "${where}Can't load PSGI application \"$path\": no such file\n" unless -f $path;
    my $app = eval { Plack::Util::load_psgi($path) };
    die "${where}Can't load PSGI application \"$path\": " . ($@ =~ s/\s+\z//r) . "\n" if !$app;
    die "${where}PSGI application \"$path\" did not return a code reference\n"
        if ref $app ne 'CODE'
        && !(Scalar::Util::blessed($app) && $app->can('to_app'));
    return ref $app eq 'CODE' ? $app : $app->to_app;
}

1;

__END__

=head1 NAME

Perennial::App - the PSGI application a configuration describes

=head1 SYNOPSIS

    my $app = Perennial::App->build($config);

=head1 DESCRIPTION

Loads every C<PSGIApp> of the configuration's C<< <Location> >> blocks (and the application
file given on the command line, mounted at C</>) with L<Plack::Util/load_psgi>, and puts them
behind L<Perennial::Router>. With C<-E development> the application is wrapped in
L<Plack::Middleware::Lint> and L<Plack::Middleware::StackTrace>, as plackup does. Errors name
the config file and line of the location.

=head1 METHODS

=head2 build

    my $app = Perennial::App->build($config);

Dies with a message naming the file when an application cannot be loaded.

=cut
