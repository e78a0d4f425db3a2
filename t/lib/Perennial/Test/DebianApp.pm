package Perennial::Test::DebianApp;
use v5.36;
use Test::More;
use Perennial::Test         qw(http_request scratch_dir script_location start_server write_file);
use Perennial::Test::Apache qw(apache_head start_apache);

# One of Debian's packaged CGI applications, served from its install path by mod_cgi (Apache
# started by the test) and by Perennial in its three modes under the same configuration
# lines: /cgi-bin/ (CGI), /perlrun/ (ModPerl::PerlRun) and /registry/ (ModPerl::Registry).
# compare() asks both for each page and holds Perennial's answers to mod_cgi's.

my @MODES = qw(cgi-bin perlrun registry);

# dir: the test's scratch directory; scripts: the directory of the application's scripts;
# conf: lines both servers get (SetEnv ...); modules: Apache modules beyond those of CGI
sub start ($class, %args) {
    my ($dir, $scripts) = @args{qw(dir scripts)};
    my $conf = ($args{conf} // '') . <<"CONF";
ScriptAlias /cgi-bin/ $scripts/
<Directory $scripts>
    Require all granted
</Directory>
CONF
    my @modules = (qw(authz_core alias cgi env mime), @{$args{modules} // []});
    write_file("$dir/apache.conf", apache_head($dir, 'APP_PORT', @modules) . "$conf\n");
    my $run = "$dir/apache-run";
    mkdir $run;
    my ($apid, $aport) = start_apache("$dir/apache.conf", 'APP_PORT', SITE_RUN => $run)
        or BAIL_OUT('Apache did not start');
    my $srv = start_server(workers => 1, conf => <<"CONF");
$conf
@{[script_location('/perlrun', $scripts, 'ModPerl::PerlRun')]}
@{[script_location('/registry', $scripts)]}
CONF
    return bless {apache => $aport, srv => $srv, run => $run}, $class;
}

sub server ($self) { $self->{srv} }

# Each page ([name, path below the scripts' URL, %request]: shows, a pattern mod_cgi's page
# matches, so that the pages compared are the application's own; method, body, headers; same,
# this page's own %opt{same}) from
# mod_cgi once, and from each of Perennial's modes twice, the second time in reverse order:
# one worker serves them all, so a resident script answers every page as a fresh one does,
# whatever came before. %opt: same => sub ($body) { ... } takes out what differs between two
# runs (a time of day); modes => [...], Perennial's modes compared (all three unless told).
sub compare ($self, $pages, %opt) {
    my $same = $opt{same} // sub ($body) {$body};
    my %want = map { $_->[0] => $self->_ask($self->{apache}, 'cgi-bin', $_) } @$pages;
    for my $page (@$pages) {
        my ($name, $path, %req) = @$page;
        like $want{$name}{body}, $req{shows}, "mod_cgi's $name shows $req{shows}";
    }
    for my $mode (@{$opt{modes} // \@MODES}) {
        for my $round (1, 2) {
            for my $page ($round == 1 ? @$pages : reverse @$pages) {
                my ($name, $path, %req) = @$page;
                my $got  = $self->_ask($self->{srv}->port, $mode, $page);
                my $want = $want{$name};
                my $what = "/$mode $name" . ($round == 2 ? ' again' : '');
                my $norm = $req{same} // $same;
                is $got->{status}, $want->{status}, "$what: status $want->{status}";
                is $got->{headers}{$_}, $want->{headers}{$_}, "$what: $_"
                    for grep { defined $want->{headers}{$_} } qw(content-type location);
                _same_page($norm->($got->{body}), $norm->($want->{body}), "$what: the page");
            }
        }
    }
    return;
}

# One page from one server; PerlRun's and Registry's have their URL written as mod_cgi's
sub _ask ($self, $port, $mode, $page) {
    my ($name, $path, %req) = @$page;
    my $res = http_request(
        $port, $req{method} // 'GET', 'localhost', "/$mode/$path",
        headers => $req{headers},
        body    => $req{body}
    );
    s{/\Q$mode\E/}{/cgi-bin/}g for grep {defined} $res->{body}, $res->{headers}{location};
    return $res;
}

# Two pages the same, or the lines where they differ
sub _same_page ($got, $want, $what) {
    return pass $what if $got eq $want;
    fail $what;
    my $dir = scratch_dir();
    write_file("$dir/got",     $got);
    write_file("$dir/mod_cgi", $want);
    diag scalar qx{cd $dir && diff -u mod_cgi got | head -40};
    return;
}

# Stopped; after a failure, the end of Perennial's error log says why
sub stop ($self) {
    my @log = map { length > 400 ? substr($_, 0, 400) . " ...\n" : $_ } split /^/m,
        $self->{srv}->error_log;
    diag "Perennial's error log ends:\n", @log[-(@log < 30 ? @log : 30) .. -1]
        unless Test::More->builder->is_passing;
    $self->{srv}->stop;
    return;
}

1;
