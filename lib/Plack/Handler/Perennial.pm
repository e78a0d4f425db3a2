package Plack::Handler::Perennial;
use v5.36;
use Perennial::Config;
use Perennial::Config::Settings ();
use Perennial::Runner;

# plackup -s Perennial: plackup's options become Perennial's settings

my %KEY = (
    max_requests      => 'max_requests_per_child',
    keepalive_timeout => 'keep_alive_timeout',
    timeout           => 'timeout',
    backlog           => 'listen_backlog',
    pid               => 'pid_file',
    error_log         => 'error_log',
    access_log        => 'access_log',
    max_clients       => 'max_clients',
    log_level         => 'log_level'
);

sub new ($class, %args) { bless {%args}, $class }

sub run ($self, $app) {

    # Starman's --enable-ssl (which plackup passes as ssl), --ssl-cert, --ssl-key: TLS belongs
    # to a front here
    my ($tls) = grep { $self->{$_} } map { ($_, tr/_/-/r) } qw(ssl ssl_cert ssl_key);
    die '--'
        . ($tls eq 'ssl' ? 'enable-ssl' : $tls =~ tr/_/-/r) . ': '
        . Perennial::Config::Settings::tls_front() . "\n"
        if $tls;
    my %set    = map { defined $self->{$_} ? ($KEY{$_} => $self->{$_}) : () } keys %KEY;
    my @listen = @{$self->{listen} // []};
    push @listen, ($self->{host} // '0.0.0.0') . ':' . $self->{port}
        if !@listen && defined $self->{port};
    $set{listen} = \@listen if @listen;
    if (my $n = $self->{workers}) {
        $set{$_} = $n for qw(start_servers min_spare_servers max_spare_servers max_clients);
    }
    $set{keep_alive}    = 0 if $self->{disable_keepalive};
    $set{merge_slashes} = 0;    # PATH_INFO as sent, as plackup's servers give it
    my $config = Perennial::Config->new(%set);
    $self->{server_ready}
        ->({host => $self->{host}, port => $self->{port}, server_software => 'Perennial'})
        if $self->{server_ready};
    return Perennial::Runner->new(config => $config, app => $app)->run;
}

1;

__END__

=head1 NAME

Plack::Handler::Perennial - run Perennial from plackup

=head1 SYNOPSIS

    plackup -s Perennial --port 5000 --workers 4 --max-requests 1000 app.psgi

=head1 DESCRIPTION

Adapts plackup's options (C<--host>, C<--port>, C<--listen>, C<--workers>,
C<--max-requests>, C<--disable-keepalive>, C<--keepalive-timeout>, C<--timeout>,
C<--backlog>, C<--pid>, C<--error-log>, C<--access-log>) to L<Perennial::Config> and serves
the application with L<Perennial::Runner>. C<--workers N> makes a fixed pool of N.

=head1 METHODS

=head2 new

    my $handler = Plack::Handler::Perennial->new(port => 5000);

=head2 run

    $handler->run($app);

=cut
