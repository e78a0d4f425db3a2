package Perennial::Status::Perl;
use v5.36;
use Carp     qw(croak);
use Config   ();
use JSON::PP ();
use Perennial::Executor::Catalog;
use Perennial::Status;
use Perennial::Status::HTML   qw(escape);
use POSIX                     qw(strftime);
use Perennial::Status::Report qw(summary);

# SetHandler perl-status: what Apache2::Status shows of the interpreter, for the whole pool.
# The loaded modules, @INC and the configuration are the serving worker's (every worker forks
# from the same manager); the compiled scripts and the memory are each worker's, read from the
# scoreboard. Values of environment variables and of PerlSetEnv are never shown.

my @SECTIONS = (
    [scripts => 'Compiled Registry scripts'],
    [memory  => 'Memory of each worker'],
    [modules => 'Loaded modules'],
    [inc     => '@INC'],
    [config  => 'Effective configuration'],
    [env     => 'Environment variable names'],
    [perl    => 'Perl'],
);

sub new ($class, %args) {
    my $self = bless {map { $_ => $args{$_} } qw(server config)}, $class;
    croak 'server and config are required' unless $self->{server} && $self->{config};
    return $self;
}

sub to_app ($self) {
    return sub ($env) {
        return Perennial::Status::response(405, "Method Not Allowed\n", Allow => 'GET, HEAD')
            if $env->{REQUEST_METHOD} !~ /\A(?:GET|HEAD)\z/;
        my $board = $self->{server}{board}
            or return Perennial::Status::response(503, "The scoreboard is not ready\n");
        my $view = $self->view($board);
        if (($env->{QUERY_STRING} // '') =~ /(?:\A|[&;])json(?:[=&;]|\z)/) {
            my $body = JSON::PP->new->canonical->ascii->encode($view);
            return Perennial::Status::response(200, $body, 'Content-Type' => 'application/json');
        }
        my $html = _html($view);
        return Perennial::Status::response(200, $html,
            'Content-Type' => 'text/html; charset=UTF-8');
    };
}

# Everything the page shows, as data
sub view ($self, $board) {
    my $s = summary($board, memory => 1);
    my (@workers, @memory, %preloaded);
    for my $w (@{$s->{workers}}) {
        my $mine = $w->{pid} == $$;
        my $scripts
            = $mine
            ? Perennial::Executor::Catalog::compiled()
            : Perennial::Executor::Catalog::from_text($board->note_of($w->{slot}));

        # Compiled before the worker was born: in the manager, shared by every worker
        for my $script (@$scripts) {
            next unless ($script->{compiled} // 0) < $w->{started};
            $script->{preloaded} = 1;
            $preloaded{"$script->{handler} $script->{file}"} //= $script;
        }
        push @workers,
            {slot => $w->{slot}, pid => $w->{pid}, serving => $mine ? 1 : 0, scripts => $scripts};
        push @memory,
            {
            slot     => $w->{slot},
            pid      => $w->{pid},
            state    => $w->{state},
            requests => $w->{requests},
            %{$w->{memory} // {}}
            };
    }
    return {
        perl => {
            version    => "$^V",
            archname   => $Config::Config{archname},   ## no critic (ProhibitPackageVars) perl's own
            executable => $^X
        },
        worker    => $$,
        preloaded => [map { $preloaded{$_} } sort keys %preloaded],
        workers   => \@workers,
        memory    => \@memory,
        modules   => _modules(),
        inc       => [grep { !ref } @INC],
        config    => _config($self->{config}),
        env       => [sort keys %ENV],
    };
}

sub _modules () {
    my @modules;
    for my $file (sort keys %INC) {
        next unless $file  =~ /\.pm\z/;
        (my $name = $file) =~ s{/}{::}g;
        $name              =~ s/\.pm\z//;
        my $version = eval { $name->VERSION };
        push @modules,
            {
            name    => $name,
            version => defined $version ? "$version" : undef,
            file    => $INC{$file} // ''
            };
    }
    return \@modules;
}

# The settings, with what could be secret left out: PerlSetEnv and SetEnv values, wherever
# they were written
sub _config ($config) {
    my $all = $config->settings;
    my %out;
    for my $key (sort keys %$all) {
        my $v = $all->{$key};
        if ($key eq 'set_env') {
            $out{$key} = {map { $_ => '(hidden)' } keys %$v};
            next;
        }
        if ($key eq 'sections') {
            $out{$key} = [map { _section($_) } @$v];
            next;
        }
        if ($key eq 'server_dir') {
            $out{$key} = _section($v);
            next;
        }
        if ($key eq 'vhosts') {
            $out{$key} = [map { _host($_) } @$v];
            next;
        }
        $out{$key} = $v;
    }
    return \%out;
}

sub _section ($sec) {
    my %s = map { defined $sec->{$_} ? ($_ => $sec->{$_}) : () }
        qw(kind match path handler response_handler app exec_cgi script_check request_deadline
        slow_request_time directory_index add_handler add_type add_encoding force_type file line);
    $s{within}   = "$sec->{within}{file} line $sec->{within}{line}" if $sec->{within};
    $s{set_env}  = [sort keys %{$sec->{set_env}}]                   if $sec->{set_env};
    $s{pass_env} = $sec->{pass_env}                                 if $sec->{pass_env};
    $s{require}  = [map { _rule($_) } @{$sec->{require}}]           if $sec->{require};
    return \%s;
}

# A virtual host, with the same care for its SetEnv and PerlSetVar values as the server's
sub _host ($h) {
    my $v = $h->{values};
    return {
        (map { ($_ => $h->{$_}) } qw(addrs name aliases file line)),
        (map { defined $v->{$_} ? ($_ => $v->{$_}) : () } qw(document_root error_log custom_logs)),
        aliases_mapped =>
            [map { ($_->{url} // "~ $_->{pattern}") . " -> $_->{dir}" } @{$v->{aliases} // []}],
        sections   => [map { _section($_) } @{$v->{sections} // []}],
        server_dir => _section($v->{server_dir} // {}),
    };
}

# A Require rule or section of them, in words
sub _rule ($r) {
    for my $kind (qw(any_of all_of none_of)) {
        return {$kind => [map { _rule($_) } @{$r->{$kind}}]} if $r->{$kind};
    }
    return $r->{text};    # As written (Perennial::Access keeps it)
}

sub _html ($v) {
    my $menu = join ' | ', map { "<a href=\"#$_->[0]\">" . escape($_->[1]) . '</a>' } @SECTIONS;
    my %body = (
        scripts => _scripts($v),
        memory  => _table(
            [qw(slot pid state requests rss pss shared private)], $v->{memory},
            'kB from /proc/PID/smaps_rollup'
        ),
        modules => _table([qw(name version file)], $v->{modules}),
        inc     => '<ol>' . join('', map { '<li>' . escape($_) . '</li>' } @{$v->{inc}}) . '</ol>',
        config  => '<pre>'
            . escape(JSON::PP->new->canonical->pretty->encode($v->{config}))
            . '</pre>',
        env  => '<p>' . escape(join ' ', @{$v->{env}}) . '</p><p>Values are not shown.</p>',
        perl => '<p>'
            . escape("Perl $v->{perl}{version} ($v->{perl}{archname}), $v->{perl}{executable}")
            . '</p>',
    );
    my $html = <<"HTML";
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Perennial Perl status</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:0;padding:12px}div.t{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
td{white-space:nowrap}th{background:#f4f4f4}pre{white-space:pre-wrap;word-break:break-all;background:#f8f8f8;padding:6px}
p,li{overflow-wrap:anywhere}</style></head><body>
<h1>Perennial Perl status (worker $v->{worker})</h1>
<p>$menu</p>
HTML
    $html .= qq{<h2 id="$_->[0]">} . escape($_->[1]) . "</h2>\n$body{$_->[0]}\n" for @SECTIONS;
    $html .= "</body></html>\n";
    utf8::encode($html) if utf8::is_utf8($html);
    return $html;
}

# The scripts preloaded in the manager once, then what each worker compiled itself
sub _scripts ($v) {
    my $html = "<h3>Preloaded in the manager (shared by every worker)</h3>\n"
        . _script_table($v->{preloaded});
    for my $w (@{$v->{workers}}) {
        my $title
            = "Worker $w->{pid} (slot $w->{slot})" . ($w->{serving} ? ', serving this page' : '');
        $html
            .= '<h3>'
            . escape($title)
            . "</h3>\n"
            . _script_table([grep { !$_->{preloaded} } @{$w->{scripts}}]);
    }
    return $html;
}

sub _script_table ($scripts) {
    return "<p>none</p>\n" unless @$scripts;
    my $when = sub ($t) { $t ? strftime('%Y-%m-%d %H:%M:%S', localtime $t) : '-' };
    my @rows = map {
        +{  %$_,
            compiled   => $when->($_->{compiled}),
            compile_ms => length($_->{compile_ms} // '') ? sprintf('%.1f', $_->{compile_ms}) : '-',
            mtime      => $when->($_->{mtime}),
        }
    } @$scripts;
    return _table([qw(file package handler compiled compile_ms mtime depends_on)], \@rows);
}

sub _table ($columns, $rows, $caption = undef) {
    my $out
        = '<div class="t"><table>'
        . ($caption ? '<caption>' . escape($caption) . '</caption>' : '');
    $out .= '<tr>' . join('', map {"<th>$_</th>"} @$columns) . "</tr>\n";
    for my $row (@$rows) {
        $out
            .= '<tr>'
            . join('', map { '<td>' . escape($row->{$_} // '-') . '</td>' } @$columns)
            . "</tr>\n";
    }
    return "$out</table></div>\n";
}

1;

__END__

=head1 NAME

Perennial::Status::Perl - the perl-status page: modules, compiled scripts, memory, settings

=head1 SYNOPSIS

    <Location /perl-status>
        SetHandler perl-status
    </Location>

=head1 DESCRIPTION

Apache2::Status for a Perennial pool, on one page (C<?json> for the data): the Registry
scripts each worker has compiled, with the package each was compiled into, when and in how
many milliseconds, and the file's modification time; each worker's RSS, PSS, shared and
private memory; the loaded modules with their versions and files; C<@INC>; the effective
configuration; the names of the environment variables, and the Perl build. Values that could
be secret (environment variables, C<PerlSetEnv>/C<SetEnv> values) are never shown.

=head1 METHODS

=head2 new

    my $app = Perennial::Status::Perl->new(server => $server, config => $config)->to_app;

=head2 to_app

=head2 view

    my $data = $status->view($board);

=cut
