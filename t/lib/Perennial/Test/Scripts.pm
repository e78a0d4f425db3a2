package Perennial::Test::Scripts;
use v5.36;
use Cwd             qw(abs_path);
use Exporter        qw(import);
use Perennial::Test qw(start_server);

# A server with one worker that mounts a script directory three ways, as the seed talk does:
# /cgi-bin (fork and exec), /perlrun (compile per request), /registry (compile once)

our @EXPORT_OK = qw(start_script_server);

sub start_script_server (%args) {
    my $dir   = abs_path($args{dir} // 't/cgi-bin');
    my $extra = $args{location} // '';
    my $conf  = <<"CONF";
Alias /cgi-bin $dir
Alias /perlrun $dir
Alias /registry $dir
<Location /cgi-bin>
    SetHandler cgi-script
    Options +ExecCGI
    $extra
</Location>
<Location /perlrun>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler Perennial::PerlRun
    $extra
</Location>
<Location /registry>
    SetHandler perl-script
    Options +ExecCGI
    PerlResponseHandler Perennial::Registry
    $extra
</Location>
CONF
    return start_server(conf => $conf . ($args{conf} // ''), workers => 1);
}

1;
