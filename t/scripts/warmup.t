use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Config;
use Perennial::Dispatch;
use Perennial::Dispatch::Warmup;
use Perennial::Walk;
use Perennial::Test qw(scratch_dir script_location start_server write_file write_script);

# The executors of the script directories are made by the manager before the workers fork
# (Perennial::Dispatch::Warmup), found as a request finds them: in process, which ones are
# made and that a request later reaches the same one; then a real server, whose workers serve
# with them, and a script written after the start is served too

my $dir = scratch_dir();
write_script("$dir/registry/$_", "print qq{Content-Type: text/plain\\n\\n$_\\n};\n", time)
    for qw(a.pl b.pl);
write_script("$dir/registry/deeper/c.pl", "print qq{Content-Type: text/plain\\n\\nc\\n};\n", time);
write_script("$dir/cgi/run.cgi", "#!/bin/sh\necho 'Content-Type: text/plain'\necho\necho cgi\n",
    time);
write_file("$dir/static/page.html", "<p>static</p>\n");
write_file("$dir/docs/index.html",  "<p>home</p>\n");

my $conf = "DocumentRoot $dir/docs\nAlias /static $dir/static\nScriptAlias /cgi-bin/ $dir/cgi/\n"
    . script_location('/registry', "$dir/registry");

# The dispatcher as Perennial::App makes it, with a build step that notes what it is asked
# to make and makes a distinct object each time
sub dispatch_of ($made) {
    my $config = Perennial::Config->load(file => write_file("$dir/warm.conf", $conf));
    return Perennial::Dispatch->new(
        walk    => Perennial::Walk->new(sections => $config->sections, base => $config->server_dir),
        aliases => $config->aliases,
        document_root => $config->document_root,
        build         => sub ($handler, $set, $root = undef, $phases = undef) {
            push @$made, [$handler, $root ? $root->{url} : ''];
            return {made => scalar @$made};
        },
    );
}

subtest 'one executor for each script directory, none for the files' => sub {
    my @made;
    my $dispatch = dispatch_of(\@made);
    my @warm     = Perennial::Dispatch::Warmup->warm($dispatch);
    is_deeply [sort map { $_->[0] } @warm], ['/cgi-bin', '/registry'],
        'the ScriptAlias and the Registry Alias; not the static Alias nor the DocumentRoot';
    is_deeply [sort { $a->[1] cmp $b->[1] } @made],
        [['cgi-script', '/cgi-bin'], ['perl-script', '/registry']],
        'each made once, though two scripts lead to the Registry one';
    my ($registry) = map { $_->[1] } grep { $_->[0] eq '/registry' } @warm;
    is $dispatch->executor_for('/registry/b.pl'), $registry,
        'a request for another script there reaches the one made';
    is $dispatch->executor_for('/static/page.html'), undef, 'a static file has none';
    is scalar @made,                                 2,     'nothing more was made';

    @made = ();
    is_deeply [map { $_->[0] } Perennial::Dispatch::Warmup->warm($dispatch)],
        ['/cgi-bin', '/registry'], 'warmed again: the same ones';
    is scalar @made, 0, 'found, not made again';
};

subtest 'a real server: made before the workers fork, and used by them' => sub {
    my $later = "$dir/later";    # Not there at the start
    my $srv   = start_server(
        conf    => $conf . script_location('/later', $later) . "LogLevel debug\n",
        workers => 2
    );
    my $manager = $srv->pid;
    like $srv->error_log,
        qr/\[pid $manager\] .*2 executors made before the workers fork, for \/cgi-bin, \/registry$/m,
        'the manager says which it made';
    is $srv->get('/registry/a.pl')->{content},        "a.pl\n", 'a Registry script';
    is $srv->get('/cgi-bin/run.cgi')->{content},      "cgi\n",  'a CGI script';
    is $srv->get('/registry/deeper/c.pl')->{content}, "c\n",    'one in a directory below';
    write_script("$dir/registry/new.pl", "print qq{Content-Type: text/plain\\n\\nnew\\n};\n", time);
    is $srv->get('/registry/new.pl')->{content}, "new\n", 'one written after the start';
    write_script("$later/l.pl", "print qq{Content-Type: text/plain\\n\\nlater\\n};\n", time);
    is $srv->get('/later/l.pl')->{content}, "later\n", 'one in a directory made after the start';

    my @makers
        = $srv->error_log =~ /\[pid (\d+)\] \[debug\] process \1 makes the \S+ executor of (\S+)/g;
    my (%by, %times);
    while (my ($pid, $url) = splice @makers, 0, 2) { $by{$url} = $pid; $times{$url}++ }
    is_deeply \%times, {'/cgi-bin' => 1, '/later' => 1, '/registry' => 1},
        'each executor made once';
    is $by{$_}, $manager, "$_: by the manager" for '/cgi-bin', '/registry';
    isnt $by{'/later'}, $manager, '/later: by the worker that served it, at its first request';
    unlike $srv->error_log, qr/\[error\]/, 'no error logged';
    $srv->stop;
};

done_testing;
