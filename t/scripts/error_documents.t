use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Test qw(script_location scratch_dir slurp start_server write_file);

# ErrorDocument for the errors of code the server runs, as Apache's ap_die uses it: a handler
# module's error status (returned, or a die), DECLINED on a missing file, a Registry script
# that died before its head or set a status and printed nothing, a mod_cgi script that failed.
# Not for a status and body a script gave itself; custom_response comes first; and the page's
# own failure gets Apache's page, not the page again. (What Apache + mod_perl 2 answered to each,
# in a user's trial of a moved site, 2026-11-30.)
my $dir = scratch_dir();
write_file("$dir/docs/errors/404.html", "our own not found\n");
write_file(
    "$dir/docs/errors/broken.pl",
    "#!$^X\nopen my \$fh, '>>', '$dir/broken.count' or die; print {\$fh} qq{ran\\n}; close \$fh;\n"
        . "die 'the error page itself fails';\n",
    0755
);
write_file("$dir/lib/My/Codes.pm", <<'PM');
package My::Codes;
use Apache2::Const -compile => qw(OK NOT_FOUND SERVER_ERROR DECLINED);
sub handler {
    my $r = shift;
    my $q = $r->args // '';
    return Apache2::Const::NOT_FOUND    if $q eq 'nf';
    return Apache2::Const::SERVER_ERROR if $q eq 'err';
    die "the handler fails\n"           if $q eq 'die';
    return Apache2::Const::DECLINED     if $q eq 'declined';
    if ($q eq 'custom') { $r->custom_response(404, 'custom words'); return Apache2::Const::NOT_FOUND }
    if ($q eq 'selfcustom') {    # Its own URL as its custom page: once, not a loop
        open my $fh, '>>', "$ENV{DOCS_COUNT}" or die $!;
        print {$fh} "ran\n";
        close $fh;
        $r->custom_response(500, '/h?selfcustom');
        return Apache2::Const::SERVER_ERROR;
    }
    $r->content_type('text/plain');
    $r->print("fine\n");
    return Apache2::Const::OK;
}
1;
PM
write_file("$dir/cgi/die.pl",    "#!$^X\ndie 'the script fails';\n",                   0755);
write_file("$dir/cgi/status.pl", "#!$^X\nmy \$r = shift; \$r->status(404); return;\n", 0755);
write_file(
    "$dir/cgi/own.pl",
    qq{#!$^X\nprint "Status: 404 Not Found\\nContent-Type: text/plain\\n\\nthe script's own\\n";\n},
    0755
);
write_file("$dir/cgi/noexec.pl", "no shebang here\n",                0755);
write_file("$dir/other/die.pl",  "#!$^X\ndie 'the script fails';\n", 0755);
write_file(
    "$dir/other/badcompile.pl",
    "#!$^X\nBEGIN { open my \$fh, '>>', '$dir/compile.count' or die; print {\$fh} qq{ran\\n} }\n"
        . "this is not perl (\n",
    0755
);
system("chmod -R a+rX $dir && chmod a+rwx $dir") == 0 or die;    # The counts are written there

local $ENV{DOCS_COUNT} = "$dir/self.count";
my $srv = start_server(workers => 1, conf => <<"CONF");
PerlPassEnv DOCS_COUNT
PerlSwitches -I$dir/lib
PerlModule My::Codes
DocumentRoot $dir/docs
<Directory $dir/docs>
    Require all granted
</Directory>
ErrorDocument 404 /errors/404.html
ErrorDocument 500 "Sorry, it broke"
<Location /h>
    SetHandler modperl
    PerlResponseHandler My::Codes
</Location>
@{[ script_location('/perl', "$dir/cgi", 'ModPerl::Registry', "    PerlOptions +ParseHeaders\n") ]}
ScriptAlias /cgi-bin/ $dir/cgi/
Alias /other $dir/other
<Location /other>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    PerlOptions +ParseHeaders
    Options +ExecCGI
    ErrorDocument 500 /other/badcompile.pl
</Location>
<Location /h2>
    ErrorDocument 404 /perl/die.pl
    SetHandler modperl
    PerlResponseHandler My::Codes
</Location>
<Location /broken>
    ErrorDocument 500 /errors/broken.pl
    SetHandler modperl
    PerlResponseHandler My::Codes
</Location>
<Directory $dir/docs/errors>
    Options +ExecCGI
    AddHandler cgi-script .pl
</Directory>
CONF
my $ask = sub ($path) {
    my $res = $srv->get($path);
    return [$res->{status}, $res->{content}];
};
is_deeply $ask->('/h?nf'), [404, "our own not found\n"],
    'a handler\'s NOT_FOUND: the ErrorDocument';
is_deeply $ask->('/h?err'),        [500, 'Sorry, it broke'],     'its SERVER_ERROR: the 500 one';
is_deeply $ask->('/h?die'),        [500, 'Sorry, it broke'],     'a handler that dies';
is_deeply $ask->('/h/x?declined'), [404, "our own not found\n"], 'DECLINED on a missing file';
is_deeply $ask->('/h?custom'),     [404, 'custom words'],        'custom_response comes first';
is_deeply $ask->('/perl/die.pl'),  [500, 'Sorry, it broke'],     'a Registry script that dies';
is_deeply $ask->('/perl/status.pl'), [404, "our own not found\n"],
    'a Registry script that set a status and printed nothing';
is_deeply $ask->('/perl/own.pl'), [404, "the script's own\n"],
    'a script\'s own status and body stand';
is_deeply $ask->('/cgi-bin/die.pl'),    [500, 'Sorry, it broke'], 'a mod_cgi script that dies';
is_deeply $ask->('/cgi-bin/noexec.pl'), [500, 'Sorry, it broke'], 'one that cannot be run';
my ($status, $body) = @{$ask->('/broken?err')};
is $status, 500, 'an ErrorDocument that fails itself: 500';
unlike $body, qr/the error page itself/, '  with Apache\'s page, not its error';
like $body,   qr/Internal Server Error/, '  which says what happened';
is scalar(() = slurp("$dir/broken.count") =~ /ran/g), 1, '  the failing page was asked once';
is $ask->('/other/die.pl')->[0], 500, 'a Registry ErrorDocument page that does not compile: 500';
is scalar(() = slurp("$dir/compile.count") =~ /ran/g), 1,
    '  it was compiled once, not again for itself';
my $self_page = $ask->('/h?selfcustom');
is $self_page->[0], 500, 'a custom_response that is its own URL: 500';
like $self_page->[1], qr/Internal Server Error/, '  with Apache\'s page, not an empty one';
is_deeply [map { /Not Found/ ? 'not found' : $_ } @{$ask->('/h2?nf')}], [404, 'not found'],
    'a 404 page that fails itself: Apache\'s 404 page, not the page\'s own 500';
is scalar(() = slurp("$dir/self.count") =~ /ran/g), 2, '  the handler ran twice, not in a loop';
is_deeply $ask->('/h'), [200, "fine\n"], 'and the handler serves on';
$srv->stop;
done_testing;
