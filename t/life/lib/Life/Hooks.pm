package Life::Hooks;
use v5.36;

# PerlChildInitHandler and PerlChildExitHandler for tests: each appends a line to the file
# named by the LIFE_HOOKS_FILE environment variable of the server; init's says what MOD_PERL
# was as the module loaded
my $LOADED_WITH = $ENV{MOD_PERL} // 'unset';
sub handler ($worker) { _note("init $worker->{pid} $worker->{slot} $LOADED_WITH") }
sub bye     ($worker) { _note("exit $worker->{pid}") }

sub _note ($line) {
    open(my $fh, '>>', $ENV{LIFE_HOOKS_FILE}) or die "Can't append to hooks file: $!\n";
    print {$fh} "$line\n";
    close $fh;
}

1;
