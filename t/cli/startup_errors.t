use v5.36;
use lib 't/lib';
use Test::More;
use IO::Socket::IP;
use Perennial::Test qw(perennial scratch_dir slurp write_file);

# Why the server cannot start is said on the terminal and in the error log, with the file and
# line; configtest finds the same (it loads the modules and applications, as apachectl does)
my $dir = scratch_dir();
write_file("$dir/dies.psgi", qq{die "the database is not there\\n";\n});

sub conf ($name, $text) {
    write_file("$dir/$name", "ErrorLog $dir/$name.error.log\nPidFile $dir/$name.pid\n$text");
    return "$dir/$name";
}

subtest 'a PSGI application that dies' => sub {
    my $conf = conf('psgi.conf',
        "Listen 127.0.0.1:0\n<Location />\nSetHandler psgi\nPSGIApp $dir/dies.psgi\n</Location>\n");
    my ($out, $code) = perennial('serve', '-c', $conf);
    is $code, 1, 'serve exits 1';
    like $out,
        qr/perennial: \S+psgi\.conf line 4: Can't load PSGI application "\S+dies\.psgi": .*the database is not there/,
        'the terminal says why, with the file and line';
    like slurp("$conf.error.log"),
        qr/\[error\] not started: \S+psgi\.conf line 4: Can't load PSGI application/,
        'and so does the error log';
    ($out, $code) = perennial('configtest', '-c', $conf);
    is $code, 1, 'configtest fails too';
    like $out, qr/the database is not there/, 'for the same reason';
};

subtest 'a PerlModule that does not load' => sub {
    my $conf = conf('module.conf',
        "Listen 127.0.0.1:0\nPerlModule No::Such::Module::Here\nPerlModule Apache2::Const\nDocumentRoot $dir\n"
    );
    my ($out, $code) = perennial('configtest', '-c', $conf);
    is $code, 1, 'configtest fails';
    like $out,
        qr/PerlModule No::Such::Module::Here: Can't load it: Can't locate No\/Such\/Module\/Here\.pm/,
        'and names the module';
    unlike $out, qr/Apache2::Const: Can't/, 'mod_perl\'s own modules are not an error';
    ($out, $code) = perennial('serve', '-c', $conf);
    is $code, 1, 'serve stops';
    like $out, qr/No::Such::Module::Here/, 'saying which';
};

subtest 'a port in use' => sub {
    my $taken = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0, Listen => 1)
        or die $@;
    my $port = $taken->sockport;
    my $conf = conf('port.conf', "Listen 127.0.0.1:$port\nDocumentRoot $dir\n");
    my ($out, $code) = perennial('serve', '-c', $conf);
    is $code, 1, 'serve exits 1';
    like $out, qr/perennial: .*127\.0\.0\.1:$port.*Address already in use/i,
        'the terminal names the address';
    like slurp("$conf.error.log"), qr/not started: .*Address already in use/i, 'so does the log';
};

done_testing;
