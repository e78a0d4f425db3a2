package Perennial::Doctor::Dynamic;
use v5.36;
use B                     ();
use Cwd                   ();
use Data::Dumper          ();
use File::Spec            ();
use HTTP::Request::Common qw(GET POST);
use Plack::Test           ();
use Perennial::Config;
use Perennial::Doctor::Child;
use Perennial::Config::Handlers;
use Perennial::Executor;
use Perennial::Executor::Inc;
use Perennial::Log;

# perennial doctor --run: what a script leaks, recorded by running it. In a scratch interpreter
# of its own, the script runs under the Registry executor for a first request (a POST of its
# form's fields when it has them, else a GET) and a second (a GET without them, as a new
# visitor's); two other interpreters each run the second request alone. What the second request left in the script's
# package variables and in the file-level variables its subs keep, and what it answered, is
# compared with a fresh run's (lines that differ between the two fresh runs, such as a time or a
# pid, are left out); %ENV, %SIG, the working directory, the umask and the open file
# descriptors are compared with what they were before the first request. The error log the
# runs wrote comes back too (Perennial::Doctor::Log reads it).

# ([{kind, line => 0, name, seen}, ...], the log text of the run that kept the script). $handler:
# the Registry handler the script is served by (whether it runs in its own directory).
sub run ($class, $path, $fields, $handler, $seconds) {
    my ($first, $second) = _requests($path, $fields);
    my $kept = Perennial::Doctor::Child->run(
        run => $seconds,
        sub { _kept($path, $handler, $first, $second) }
    );
    my @fresh = $kept->{error} ? () : map {
        Perennial::Doctor::Child->run(run => $seconds, sub { _fresh($path, $handler, $second) })
    } 1 .. 2;
    my ($fail) = grep { $_->{error} } $kept, @fresh;
    return ([{kind => 'run', line => 0, name => $fail->{error}}], $kept->{log} // '') if $fail;
    my @found = (
        _output($kept->{answer}, map { $_->{answer} } @fresh),
        _variables($kept->{state}, $fresh[0]{state}, $fresh[1]{state}),
        _environment($kept->{env}, $fresh[0]{env}, $fresh[1]{env}),
        _descriptors($kept->{fds}, $fresh[0]{fds}),
        _world($kept->{before}, $kept->{after}),
    );
    return (\@found, $kept->{log});
}

# The two requests: the form posted, then a plain GET (what the first set, the second does not)
sub _requests ($path, $fields) {
    my ($name) = $path =~ m{([^/]+)\z};
    my $url = '/' . _escape($name);
    return (@$fields ? POST($url, [map { ($_ => 'first') } @$fields]) : GET($url), GET($url));
}

sub _escape ($text) { $text =~ s/([^A-Za-z0-9._~-])/sprintf '%%%02X', ord $1/ger }

# The Registry executor for the script's directory, as the server makes one, and its app
sub _executor ($path, $name) {
    my ($dir) = $path =~ m{\A(.*)/};
    my $log   = Perennial::Log->new(config => Perennial::Config->new(log_level => 'info'));
    my $ex    = Perennial::Executor->new(
        root   => $dir,
        log    => $log,
        name   => $name,
        policy => Perennial::Executor->policy_of(
            registry => Perennial::Config::Handlers::handler_policy($name)->{chdir}
        ),
        check     => 'never',
        setup_env => 1
    );
    return ($ex, Plack::Test->create($ex->to_app));
}

sub _kept ($path, $handler, $first, $second) {
    my ($ex, $client) = _executor($path, $handler);
    my $before = _outside();
    $client->request($first);
    my $answer = _answer($client->request($second));
    return {
        answer => $answer,
        state  => _state($ex, $path),
        env    => {%ENV},
        fds    => _fds(),
        before => $before,
        after  => _outside()
    };
}

sub _fresh ($path, $handler, $second) {
    my ($ex, $client) = _executor($path, $handler);
    my $answer = _answer($client->request($second));
    return {answer => $answer, state => _state($ex, $path), env => {%ENV}, fds => _fds()};
}

sub _answer ($res) {
    return join "\n", $res->status_line, $res->headers->as_string, $res->decoded_content // '';
}

# The script's package variables and the file-level variables its subs keep, each as text
sub _state ($ex, $path) {
    my ($script) = grep { $_->{file} eq $path } $ex->compiled or return {};
    my $package  = $script->{package};
    my $stash    = do {
        no strict 'refs';    ## no critic (ProhibitNoStrict) the script's own symbol table
        \%{"${package}::"};
    };
    my %state;
    for my $name (sort keys %$stash) {
        next if $name =~ /::\z|\A(?:BEGIN|END|INIT|CHECK|UNITCHECK|__ANON__|DATA|ISA|EXPORT\w*)\z/;
        my $glob = $stash->{$name};
        next unless ref \$glob eq 'GLOB';
        $state{"\$$name"} = _text(${*{$glob}{SCALAR}}) if defined ${*{$glob}{SCALAR}};
        $state{"\@$name"} = _text(*{$glob}{ARRAY})     if *{$glob}{ARRAY} && @{*{$glob}{ARRAY}};
        $state{"\%$name"} = _text(*{$glob}{HASH})      if *{$glob}{HASH}  && %{*{$glob}{HASH}};
        my $code = *{$glob}{CODE} or next;
        _kept_lexicals(\%state, $name, $code, $path);
    }
    return \%state;
}

# The lexicals a named sub of the script or of one of its libraries shares with its file
sub _kept_lexicals ($state, $sub, $code, $path) {
    my $cv = B::svref_2object($code);
    return if $cv->XSUB || !${$cv->START};
    my $file = $cv->FILE // return;
    return if Perennial::Executor::Inc::perls_own($file) || $file =~ /\A\(eval/;
    my ($names, $values) = ($cv->PADLIST->ARRAYelt(0), $cv->PADLIST->ARRAYelt(1));
    for my $i (1 .. $names->MAX) {
        my $pn = $names->ARRAYelt($i);
        next unless $$pn && ($pn->FLAGS & B::PADNAMEt_OUTER) && defined $pn->PV;
        my $value = $values->ARRAYelt($i);
        next unless $$value;
        my $kind = $file eq $path ? 'closure' : 'lib-state';
        $state->{"$kind " . $pn->PV} = _text($value->object_2svref);
    }
    return;
}

sub _text ($ref) {
    local $Data::Dumper::Indent   = 0;
    local $Data::Dumper::Sortkeys = 1;
    local $Data::Dumper::Terse    = 1;
    local $Data::Dumper::Useqq    = 1;
    local $Data::Dumper::Maxdepth = 4;
    my $text = Data::Dumper::Dumper(ref $ref eq 'SCALAR' || ref $ref eq 'REF' ? $$ref : $ref);
    return length $text > 200 ? substr($text, 0, 197) . '...' : $text;
}

# What every script of a worker shares: signal handlers, working directory, umask (%ENV holds
# the last request's CGI variables until the next sets its own, and the executor opens files
# of its own as it needs them: those two are compared with a fresh run's)
sub _outside () {
    return {
        sig   => {map { $_ => _handler($SIG{$_}) } grep { defined $SIG{$_} } keys %SIG},
        cwd   => Cwd::getcwd(),
        umask => sprintf('%04o', umask),
    };
}

# What the open file descriptors lead to, a temporary file or a pipe as any other:
# {target => count}
sub _fds () {
    opendir(my $dh, '/proc/self/fd') or die "Can't read /proc/self/fd: $!\n";
    my $tmp = File::Spec->tmpdir;
    my %count;
    for my $fd (grep { /\A\d+\z/ && $_ != fileno $dh } readdir $dh) {
        my $to = readlink("/proc/self/fd/$fd") // next;
        $to = 'a temporary file' if index($to, "$tmp/") == 0;
        $to =~ s/\A(\w+):\[\d+\]\z/a $1/;    # pipe:[9720318], socket:[...]: one of them
        $count{$to}++;
    }
    return \%count;
}

# Files the two requests left open that the second alone does not
sub _descriptors ($kept, $fresh) {
    my @more = grep { $kept->{$_} > ($fresh->{$_} // 0) } sort keys %$kept;
    return map {
        +{  kind => 'leak',
            line => 0,
            name => "a file descriptor open on $_",
            seen => "after two requests $kept->{$_} are open; after the second alone, "
                . ($fresh->{$_} // 0)
        }
    } @more;
}

sub _handler ($h) { ref $h ? 'a sub' : "$h" }

# The second request's answer, line by line, against a fresh run's (less what two fresh runs
# do not agree on)
sub _output ($kept, $fresh, $again) {
    my @k = split /\n/, $kept,  -1;
    my @f = split /\n/, $fresh, -1;
    my @a = split /\n/, $again, -1;
    for my $i (0 .. ($#k > $#f ? $#k : $#f)) {
        my ($got, $want) = ($k[$i] // '(nothing)', $f[$i] // '(nothing)');
        next if $got eq $want || $want ne ($a[$i] // '(nothing)');
        return {
            kind => 'output',
            line => 0,
            name => 'the second request\'s answer',
            seen => "it said \"$got\" where a fresh interpreter says \"$want\""
        };
    }
    return;
}

# What the second request left behind that a fresh run does not (less what two fresh runs do not
# agree on)
sub _variables ($kept, $fresh, $again) {
    my @found;
    for my $key (_keys($kept, $fresh)) {
        my ($got, $want) = ($kept->{$key} // 'undef', $fresh->{$key} // 'undef');
        next if $got eq $want || $want ne ($again->{$key} // 'undef');
        my ($kind, $name) = $key =~ /\A(closure|lib-state) (.+)\z/ ? ($1, $2) : ('global', $key);
        push @found,
            {
            kind => $kind,
            line => 0,
            name => $name,
            seen => "after two requests it holds $got; after the second alone, $want"
            };
    }
    return @found;
}

# %ENV after the second request, against a fresh run's: a variable the first request set that
# the executor did not take away
sub _environment ($kept, $fresh, $again) {
    my @found;
    for my $key (_keys($kept, $fresh)) {
        my ($got, $want) = ($kept->{$key} // '(not set)', $fresh->{$key} // '(not set)');
        next if $got eq $want || $want ne ($again->{$key} // '(not set)');
        push @found,
            {
            kind => 'leak',
            line => 0,
            name => "\$ENV{$key}",
            seen => "after two requests it is $got; after the second alone, $want"
            };
    }
    return @found;
}

# The keys of either hash, in order
sub _keys ($one, $other) {
    my %all  = (%$one, %$other);
    my @keys = sort keys %all;
    return @keys;
}

# What the requests changed for the scripts that run after them in the same worker
sub _world ($before, $after) {
    my @found;
    my $leak = sub ($name, $seen) {
        push @found, {kind => 'leak', line => 0, name => $name, seen => $seen};
    };
    for my $sig (_keys($before->{sig}, $after->{sig})) {
        my ($was, $is) = map { $_->{sig}{$sig} // 'DEFAULT' } $before, $after;
        $leak->("\$SIG{$sig}", "it was $was before the requests, $is after") if $was ne $is;
    }
    for my $key (qw(cwd umask)) {
        my $name = $key eq 'cwd' ? 'the working directory' : 'the umask';
        $leak->($name, "it was $before->{$key} before the requests, $after->{$key} after")
            if $before->{$key} ne $after->{$key};
    }
    return @found;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Dynamic - what a script leaks from one request to the next, by running it

=head1 SYNOPSIS

    my ($found, $log) = Perennial::Doctor::Dynamic->run($path, ['name', 'email'], 30);
    # [{kind => 'output', line => 0, name => "the second request's answer", seen => '...'}, ...]

=head1 DESCRIPTION

The dynamic evidence of C<perennial doctor --run> (see L<Perennial::Manual::Scripts>). The
script runs under the Registry executor in a scratch process for two requests (a GET with its
form fields, whose names L<Perennial::Doctor::Static> found, then a POST), and two other
processes run the second request alone. Reported: an answer that differs from a fresh run's
(C<output>), package variables and the file-level variables of its subs that differ
(C<global>, C<closure>, C<lib-state>), and what the requests changed for the scripts after them
(C<leak>: C<%ENV>, C<%SIG>, the working directory, the umask, open file descriptors). Lines
and values that differ between the two fresh runs (a time, a pid) are left out.

Running a script does what the script does: its writes, its mail, its database changes.

=cut
