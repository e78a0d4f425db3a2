use v5.36;
use lib 't/lib';
use File::Copy qw(copy);
use Test::More;
use URI::Escape             qw(uri_escape);
use Perennial::Test         qw(scratch_dir);
use Perennial::Test::Apache qw(apache_available);
use Perennial::Test::DebianApp;

# Debian's W3C Markup Validator (w3c-markup-validator), from /usr/lib/cgi-bin: a -T script of
# 125 KB that reads its configuration in a BEGIN block from W3C_VALIDATOR_CFG (here a copy the
# test makes), checks the documents the tests post, and calls exit when done. mod_cgi's pages,
# and Perennial's in CGI, PerlRun and Registry mode.
my $check = '/usr/lib/cgi-bin/w3c-markup-validator/check';
plan skip_all => 'apache2 and w3c-markup-validator are not installed (make test installs them)'
    unless apache_available() && -x $check;
my $dir = scratch_dir();
mkdir "$dir/w3c"                  or die;
copy($_, "$dir/w3c/")             or die "copy $_: $!" for glob '/etc/w3c/*';
system("chmod -R a+rX $dir") == 0 or die;

my $site = Perennial::Test::DebianApp->start(
    dir     => $dir,
    scripts => '/usr/lib/cgi-bin/w3c-markup-validator',
    conf    => "SetEnv W3C_VALIDATOR_CFG $dir/w3c/validator.conf\n",
);
my $strict = '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" '
    . '"http://www.w3.org/TR/html4/strict.dtd"><html><head><title>t</title></head><body>';
my $valid = "$strict<p>fine</p></body></html>";
my $wrong = "$strict<p><b>bold</p><blink>x</blink></body></html>";
my $form  = 'fragment=' . uri_escape($wrong) . '&doctype=Inline&verbose=1';
$site->compare(
    [   ['no document', 'check', shows => qr{\(<q>undefined</q>\) is not\s+supported}],
        [   'a valid document',
            'check?fragment=' . uri_escape($valid),
            shows => qr/successfully checked as\s+HTML 4.01 Strict/
        ],
        [   'an invalid one',
            'check?fragment=' . uri_escape($wrong) . ';verbose=1',
            shows => qr/end tag for &quot;B&quot; omitted/
        ],
        [   'its errors as SOAP',
            'check?output=soap12;fragment=' . uri_escape($wrong),
            shows => qr{<m:validity>false</m:validity>}
        ],
        [   'a posted form', 'check',
            method  => 'POST',
            body    => $form,
            headers => {'Content-Type' => 'application/x-www-form-urlencoded'},
            shows   => qr/element &quot;BLINK&quot; undefined/
        ],
        ['a URL it may not fetch', 'check?uri=file:///etc/passwd', shows => qr{\(<q>file</q>\)}],
    ]
);
$site->stop;
done_testing;
