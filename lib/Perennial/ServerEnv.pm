package Perennial::ServerEnv;
use v5.36;

# The environment perennial was started with, and the one a site's code runs in. mod_perl
# clears %ENV as it starts, then puts in it MOD_PERL_API_VERSION and the server level's
# PerlSetEnv and PerlPassEnv variables: the code a site loads and runs sees what its
# configuration gives it, not the variables of the shell or the service manager that started
# the server (HOME, credentials, tokens), which any printenv script would show its clients.
# Perennial does the same, in the process's own environment too (so a child a script starts
# sees no more than the script). PATH stays, as Apache passes it to its scripts; TZ, so that the
# times the server and the code it runs write agree; TMPDIR, where their temporary files go; and
# PLACK_ENV, which perennial sets as plackup does (its --env, or the configuration's).
# A PSGI application named as the server's own (plackup's way, `perennial serve app.psgi`)
# keeps the environment it was started with, as under plackup and Starman, where applications
# read their settings from it.

my $STARTED;    # A copy of the environment perennial was started with, once it is made clean
my %GIVEN;      # The variables the configuration gave last time, and their values

# The environment perennial was started with: ${NAME} in the configuration files and PassEnv's
# values come from it, on a graceful restart too, and a binary upgrade starts the new server
# with it. (%ENV itself until start-up has made it clean.)
sub started () { $STARTED // \%ENV }

# %ENV as the site's code gets it: PATH, TZ, TMPDIR and PLACK_ENV of the start (or, $as_started,
# all of it), and $vars (the server level's PerlSetEnv and PerlPassEnv values, and
# MOD_PERL_API_VERSION). Again (a graceful restart), $vars are set over what is there, and
# those the configuration gave last time and no longer gives go (a PerlPassEnv taken out, so
# that a secret is no longer passed on): what the start-up code set stays, since a module that
# set it when it loaded is not loaded again.
sub give_code ($vars, $as_started = 0) {
    if ($STARTED) {
        ## no critic (RequireLocalizedPunctuationVars) for good, as the start's
        for my $gone (grep { !exists $vars->{$_} } keys %GIVEN) {
            if ($as_started && exists $STARTED->{$gone}) { $ENV{$gone} = $STARTED->{$gone} }
            else                                         { delete $ENV{$gone} }
        }
        @ENV{keys %$vars} = values %$vars;
        %GIVEN = %$vars;
        return;
    }
    $STARTED = {%ENV};
    %GIVEN   = %$vars;
    %ENV     = (        ## no critic (RequireLocalizedPunctuationVars) for good, as mod_perl's start
        $as_started
        ? %$STARTED
        : ( PATH => $STARTED->{PATH} // '/usr/local/bin:/usr/bin:/bin',
            map { defined $STARTED->{$_} ? ($_ => $STARTED->{$_}) : () } qw(TZ TMPDIR PLACK_ENV)
        ),
        %$vars
    );
    return;
}

1;

__END__

=head1 NAME

Perennial::ServerEnv - the environment perennial was started with, and the clean one its code runs in

=head1 SYNOPSIS

    Perennial::ServerEnv::give_code({MOD_PERL_API_VERSION => 2, SITE => 'shop'});
    Perennial::ServerEnv::give_code(\%variables, 1);    # and all it was started with
    my $port = Perennial::ServerEnv::started()->{PORT};

=head1 DESCRIPTION

As mod_perl does when it starts, the manager gives the code a site loads (PerlRequire,
PerlModule, scripts, handlers, applications) an environment of PATH, TZ, TMPDIR, PLACK_ENV,
MOD_PERL_API_VERSION and the server level's PerlSetEnv and PerlPassEnv variables, before it
loads any of it; a graceful restart sets those variables again over what start-up code left.
Everything else the server was started with stays out of C<%ENV> and of the process's
environment, unless the server's own application is a PSGI one named on its command line
(C<perennial serve app.psgi>), which keeps all of it, as under plackup and Starman. What it was
started with is kept for the server's own use: the configuration's C<${NAME}> and PassEnv
values, and a binary upgrade's new server.

=head1 FUNCTIONS

=head2 give_code

    Perennial::ServerEnv::give_code(\%variables, $as_started);

=head2 started

    my $env = Perennial::ServerEnv::started();    # a hash reference

=cut
