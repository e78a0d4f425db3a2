package Perennial::Test::Scripts;
use v5.36;
use Cwd             qw(abs_path);
use Exporter        qw(import);
use Perennial::Test qw(script_location start_server);

# A server with one worker that mounts a script directory three ways, as the seed talk does:
# /cgi-bin (fork and exec), /perlrun (compile per request), /registry (compile once)

our @EXPORT_OK = qw(start_script_server pid_script_server);

sub start_script_server (%args) {
    my $dir   = abs_path($args{dir}    // 't/cgi-bin');
    my $extra = length($args{location} // '') ? "    $args{location}\n" : '';
    my $conf  = join '',
        script_location('/cgi-bin',  $dir, 'cgi-script',          $extra),
        script_location('/perlrun',  $dir, 'Perennial::PerlRun',  $extra),
        script_location('/registry', $dir, 'Perennial::Registry', $extra);
    return start_server(conf => $conf . ($args{conf} // ''), workers => 1);
}

# The same over a scratch directory of scripts, with pid.pl added: the server, a GET of a path
# as {status, body}, and the pid its one worker answers with (to see that it lives on)
sub pid_script_server ($dir) {
    Perennial::Test::write_file("$dir/pid.pl",
        qq{print "Content-Type: text/plain\\n\\npid \$\$\\n";\n}, 0755);
    system("chmod -R a+rX $dir") == 0 or die "Can't chmod $dir\n";
    my $srv = start_script_server(dir => $dir);
    my $get = sub ($path) { Perennial::Test::http_request($srv->port, 'GET', 'localhost', $path) };
    return ($srv, $get, $get->('/registry/pid.pl')->{body});
}

1;
