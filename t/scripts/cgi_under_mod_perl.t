use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(http_request scratch_dir script_location start_server write_file);

# CGI.pm loaded before the scripts with MOD_PERL set (PerlModule CGI, as the mod_perl Guide's
# startup has it) reads a script's CGI variables while the script runs with them, as one the
# script loads itself does (Perennial::Executor::CGIWraps), and gives the same answers as it
# did through the request object: the query, a form's body, a cookie, $q->r, a header printed
# through a layer the script pushed (function style too), -nph dropped as under mod_perl. With
# PerlSetupEnv Off it still works through the request object.
my $dir = scratch_dir();
write_file("$dir/cgi/show.pl", <<'PERL', 0755);
use CGI;
my $q = CGI->new;
print $q->header('text/plain');
print join(' ', "mod_perl=$CGI::MOD_PERL", 'r=' . ref($q->r), 'uri=' . ($q->r ? $q->r->uri : '-'),
    'seen=' . ($q->cookie('seen') // '-'), map { "$_=" . $q->param($_) } $q->param), "\n";
PERL
write_file("$dir/cgi/func.pl", <<'PERL', 0755);
use CGI qw(:standard);
binmode STDOUT, ':crlf' if param('crlf');
binmode STDOUT, ':encoding(UTF-8)' if param('utf8');
print header(-type => 'text/plain', -attachment => "caf\xc3\xa9.txt"), 'a=', param('a') // '-', "\n";
PERL
write_file("$dir/cgi/clean_env.pl", <<'PERL', 0755);
%ENV = (PATH => '/bin:/usr/bin');    # A taint-minded script's clean environment
use CGI ();
my $q = CGI->new;
print $q->header('text/plain'), 'name=', $q->param('name') // '-', ' REQUEST_METHOD=',
    $ENV{REQUEST_METHOD} // 'none', "\n";
PERL
write_file("$dir/cgi/nph.pl", <<'PERL', 0755);
use CGI qw(-nph);
print CGI->new->header('text/plain'), "no status line of its own\n";
PERL
system("chmod -R a+rX $dir") == 0 or die;
my $srv = start_server(
    workers => 1,
    conf    => "PerlModule CGI\n"
        . script_location('/registry', "$dir/cgi")
        . script_location('/perlrun',  "$dir/cgi", 'ModPerl::PerlRun')
        . script_location('/noenv', "$dir/cgi", 'ModPerl::Registry', "    PerlOptions -SetupEnv\n")
);
my $get
    = sub ($path, %opt) { http_request($srv->port, $opt{method} // 'GET', 'localhost', $path, %opt) };

my $post_form = sub ($path) {
    $get->(
        $path,
        method  => 'POST',
        body    => 'name=Ann',
        headers => {'Content-Type' => 'application/x-www-form-urlencoded'}
    );
};

for my $loc (qw(registry perlrun)) {
    my $res = $get->("/$loc/show.pl?a=1&b=two", headers => {Cookie => 'seen=yes'});
    is $res->{status}, 200, "/$loc: 200";
    is $res->{body}, "mod_perl=2 r=Apache2::RequestRec uri=/$loc/show.pl seen=yes a=1 b=two\n",
        "/$loc: CGI.pm reads the CGI variables; \$q->r is the request object";
    $res = $post_form->("/$loc/show.pl");
    is $res->{body}, "mod_perl=2 r=Apache2::RequestRec uri=/$loc/show.pl seen=- name=Ann\n",
        "/$loc: a form's body, read from STDIN";
    for my $layer (qw(crlf utf8)) {
        $res = $get->("/$loc/func.pl?a=1&$layer=1");
        is_deeply [@$res{qw(status body)},
            @{$res->{headers}}{qw(content-type content-disposition)}],
            [
            200,
            $layer eq 'crlf' ? "a=1\r\n" : "a=1\n",
            'text/plain; charset=ISO-8859-1',
            "attachment; filename=\"caf\xc3\xa9.txt\""
            ],
            "/$loc: header() printed through :$layer goes as under mod_perl, the layer on the body";
    }
    $res = $post_form->("/$loc/clean_env.pl");
    is $res->{body}, "name=Ann REQUEST_METHOD=POST\n",
        "/$loc: a script that empties %ENV: CGI.pm puts the CGI variables back, as under mod_perl";
    $res = $get->("/$loc/nph.pl");
    is_deeply [@$res{qw(status body)}], [200, "no status line of its own\n"],
        "/$loc: -nph is dropped, as CGI.pm does under mod_perl";
}

my $res = $get->('/noenv/show.pl?a=1', headers => {Cookie => 'seen=yes'});
is $res->{body}, "mod_perl=2 r=Apache2::RequestRec uri=/noenv/show.pl seen=yes a=1\n",
    'PerlSetupEnv Off: CGI.pm works through the request object';
unlike $srv->error_log, qr/\[error\]/, 'no error logged';
$srv->stop;
done_testing;
