package Perennial::Doctor::Sites;
use v5.36;
use Cwd ();
use Perennial::Config::Handlers;
use Perennial::Dispatch;
use Perennial::Dispatch::Files;
use Perennial::Walk;

# The scripts a configuration serves, and how (perennial doctor -c): every file under each
# Alias, ScriptAlias and DocumentRoot, of the main server and of each virtual host, is asked
# for as a request would ask, through the same dispatcher; those that a script executor would
# run are kept with the mode it runs them in (Registry, PerlRun or CGI), the URL and the
# configuration line that chose the handler. Nothing is loaded or compiled.

# [{script => its real path, served => [{mode, url, where}]}], ordered by path
sub scripts ($class, $config) {
    my %by;
    for my $dispatch (_dispatches($config)) {
        for my $root ($dispatch->roots) {
            my $top = Cwd::realpath($root->{dir}) // next;
            next unless -d $top;
            for my $file (Perennial::Dispatch::Files->scripts_below($top)) {
                my $url    = $root->{url} . substr $file, length $top;
                my $served = _served($dispatch, $url) or next;
                my $real   = Cwd::realpath($served->{file}) // next;
                my $seen   = $by{$real} //= {script => $real, served => []};
                push @{$seen->{served}}, $served->{how}
                    unless grep { $_->{url} eq $url } @{$seen->{served}};
            }
        }
    }
    return map { $by{$_} } sort keys %by;
}

# The main server's dispatcher and each virtual host's, as Perennial::App makes them, with
# nothing built: a request is only planned
sub _dispatches ($config) {
    my $new = sub (%args) {
        Perennial::Dispatch->new(
            walk  => Perennial::Walk->new(sections => $args{sections}, base => $args{base}),
            build => sub { die "perennial doctor builds nothing\n" },
            %args{qw(aliases document_root)}
        );
    };
    my @sections   = @{$config->sections};
    my @dispatches = $new->(
        %{  {   sections      => \@sections,
                aliases       => $config->aliases,
                document_root => $config->document_root,
                base          => [$config->server_dir]
            }
        }
    );
    for my $v (map { $_->{values} } @{$config->vhosts}) {
        push @dispatches,
            $new->(
            %{  {   sections      => [@sections, @{$v->{sections} // []}],
                    aliases       => [@{$v->{aliases} // []}, @{$config->aliases}],
                    document_root => $v->{document_root} // $config->document_root,
                    base          => [$config->server_dir, $v->{server_dir} // {}]
                }
            }
            );
    }
    return @dispatches;
}

# {file, how => {mode, url, where}} when a GET of the URL would run a script
sub _served ($dispatch, $url) {
    my $plan = $dispatch->plan(
        {PATH_INFO => $url, SCRIPT_NAME => '', REQUEST_URI => $url, REQUEST_METHOD => 'GET'});
    return unless $plan->{kind} eq 'script' && ref $plan->{hit} && $plan->{hit}{file};
    my $set = $plan->{set};
    my ($mode, $key)
        = $plan->{handler} eq 'cgi-script'
        ? ('cgi', 'handler')
        : (
        (Perennial::Config::Handlers::handler_policy($set->{response_handler}) // {})->{mode},
        'response_handler'
        );
    return unless $mode;
    my ($chose) = grep { defined $_->{$key} } reverse @{$set->{sections} // []};
    my $where
        = $chose && $chose->{file} ? "$chose->{file} line $chose->{line}"
        : $plan->{root}{script}    ? 'ScriptAlias'
        :                            'AddHandler';
    my $how = {mode => $mode, url => $url, where => $where, handler => $set->{$key}};
    return {file => $plan->{hit}{file}, how => $how};
}

1;

__END__

=head1 NAME

Perennial::Doctor::Sites - the scripts a configuration serves, and in which mode

=head1 SYNOPSIS

    for my $s (Perennial::Doctor::Sites->scripts($config)) {
        say "$s->{script}: ", join ', ', map {"$_->{mode} at $_->{url}"} @{$s->{served}};
    }

=head1 DESCRIPTION

What C<perennial doctor -c perennial.conf> examines: each file under the configuration's
C<Alias>, C<ScriptAlias> and C<DocumentRoot> directories (main server and virtual hosts) that a
GET would hand to a script executor, with the mode it would run in (C<registry>, C<perlrun>,
C<cgi>), the URL and where the handler was chosen. The requests are planned by
L<Perennial::Dispatch>, as the server plans them; nothing is compiled or run.

=cut
