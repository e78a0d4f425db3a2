package Perennial::Test::Scripts;
use v5.36;
use Cwd             qw(abs_path);
use Exporter        qw(import);
use Perennial::Test qw(script_location start_server);

# A server with one worker that mounts a script directory three ways, as the seed talk does:
# /cgi-bin (fork and exec), /perlrun (compile per request), /registry (compile once)

our @EXPORT_OK = qw(start_script_server);

sub start_script_server (%args) {
    my $dir   = abs_path($args{dir}    // 't/cgi-bin');
    my $extra = length($args{location} // '') ? "    $args{location}\n" : '';
    my $conf  = join '',
        script_location('/cgi-bin',  $dir, 'cgi-script',          $extra),
        script_location('/perlrun',  $dir, 'Perennial::PerlRun',  $extra),
        script_location('/registry', $dir, 'Perennial::Registry', $extra);
    return start_server(conf => $conf . ($args{conf} // ''), workers => 1);
}

1;
