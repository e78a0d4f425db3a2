package Perennial::Status::HTML;
use v5.36;
use Exporter                  qw(import);
use Perennial::Status::Report qw(apache_time duration_words legend);

our @EXPORT_OK = qw(escape page);

# The server-status page as mod_status lays it out: the server's figures, the scoreboard
# string with its legend, and one row per worker. It reads at any width: the figures wrap, the
# scoreboard breaks anywhere, and the worker table scrolls sideways inside its own box.

my $STYLE = <<'CSS';
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,sans-serif;margin:0;padding:12px;color:#1b1b1b;background:#fff}
h1{font-size:1.35em;margin:0 0 8px;overflow-wrap:anywhere}
h2{font-size:1.1em;margin:16px 0 6px}
dl{margin:0;display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
pre.board{font:15px/1.3 ui-monospace,monospace;background:#f4f4f4;padding:8px;margin:0;
white-space:pre-wrap;word-break:break-all;line-break:anywhere}
ul.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 14px}
ul.legend code{font-weight:700}
.table{display:inline-block;overflow-x:auto;max-width:100%;border:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;white-space:nowrap}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
th{background:#f4f4f4;position:sticky;top:0}
td.l,th.l{text-align:left}td.req{max-width:32em;overflow:hidden;text-overflow:ellipsis}
tr.busy td{background:#fff7e0}
@media (max-width:600px){body{padding:8px;font-size:13px}dl{grid-template-columns:1fr}dd{margin-bottom:4px}}
CSS

sub page ($s, $env, $refresh = undef) {
    my $host = escape($env->{SERVER_NAME} // 'localhost');
    my $via  = $env->{SERVER_PORT} ? ' (port ' . escape($env->{SERVER_PORT}) . ')'        : '';
    my $meta = defined $refresh    ? qq{<meta http-equiv="refresh" content="$refresh">\n} : '';
    my $html = <<"HTML";
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
$meta<title>Perennial Status</title>
<style>$STYLE</style></head><body>
<h1>Perennial Server Status for $host$via</h1>
HTML
    $html .= _figures($s) . _board($s) . _table($s);
    $html .= "<p>Figures in <a href=\"?auto\">?auto</a>, <a href=\"?json\">?json</a> and "
        . "<a href=\"?metrics\">?metrics</a> (Prometheus).</p>\n</body></html>\n";
    utf8::encode($html) if utf8::is_utf8($html);
    return $html;
}

sub _figures ($s) {
    my $up   = $s->{uptime} > 0 ? $s->{uptime} : 1;
    my $acc  = $s->{accesses};
    my $cpu  = $s->{cpu};
    my @rows = (
        ['Server Version',                   $s->{server_version}],
        ['Server MPM',                       $s->{mpm}],
        ['Current Time',                     apache_time($s->{now})],
        ['Restart Time',                     apache_time($s->{started})],
        ['Parent Server Config. Generation', $s->{generation}],
        ['Server uptime',                    duration_words($s->{uptime})],
        ['Server load',                      join(' ', map { $_ // '-' } @{$s->{load}})],
        [   'Total accesses',
            sprintf(
                '%d - Total Traffic: %s - Total Duration: %d ms',
                $acc,
                _kb($s->{bytes}),
                $s->{micros} / 1000
            )
        ],
        [   'CPU Usage',
            sprintf(
                'u%.2f s%.2f cu%.2f cs%.2f - %.3g%% CPU load',
                @$cpu{qw(user system children_user children_system)},
                ($cpu->{user} + $cpu->{system} + $cpu->{children_user} + $cpu->{children_system})
                    / $up * 100
            )
        ],
        [   'Rates',
            sprintf(
                '%.3g requests/sec - %s/second - %s/request - %.3g ms/request',
                $acc / $up,
                _kb($s->{bytes} / $up),
                _kb($acc ? $s->{bytes} / $acc : 0),
                $acc ? $s->{micros} / 1000 / $acc : 0
            )
        ],
        [   'Workers',
            "$s->{busy} requests currently being processed, $s->{idle} idle workers, "
                . "$s->{parked} idle connections parked"
                . (
                $s->{spooled}
                ? ' (' . _kb($s->{spooled}) . ' of slow readers\' responses spooled)'
                : ''
                )
                . ($s->{graceful} ? ", $s->{graceful} gracefully finishing" : '')
        ],
        map {
            [   "Listen queue $_->{listener}",
                defined $_->{depth}
                ? "$_->{depth} connections waiting to be accepted (limit $_->{limit})"
                : 'not measured (Unix socket)'
            ]
        } @{$s->{queues}}
    );
    return
          "<dl>\n"
        . join('', map { "<dt>$_->[0]</dt><dd>" . escape($_->[1]) . "</dd>\n" } @rows)
        . "</dl>\n";
}

sub _board ($s) {
    my $legend = join '',
        map { "<li><code>$_->[0]</code> " . escape($_->[1]) . "</li>" } @{legend()};

    # Lines of 64 slots, as mod_status prints them
    return
          "<h2>Scoreboard</h2>\n<pre class=\"board\" id=\"scoreboard\">"
        . escape(join "\n", unpack '(A64)*', $s->{scoreboard})
        . "</pre>\n<ul class=\"legend\">$legend</ul>\n";
}

sub _table ($s) {
    my @head = (
        ['Srv', 'slot-generation'],
        ['PID'],
        ['Acc',     'requests: this connection / this worker / this slot'],
        ['M',       'state'],
        ['CPU',     'CPU seconds of the worker'],
        ['SS',      'seconds since the current or last request began'],
        ['Req',     'milliseconds the last request took'],
        ['Dur',     'milliseconds spent on all of this slot\'s requests'],
        ['Child',   'MB sent by this worker'],
        ['Slot',    'MB sent from this slot'],
        ['RSS',     'resident memory, MB'],
        ['PSS',     'proportional share of memory, MB'],
        ['Shared',  'memory shared with other processes, MB'],
        ['Private', 'memory of this worker alone, MB'],
        ['Client',  '',                                                'l'],
        ['VHost',   'the virtual host of the current or last request', 'l'],
        ['Request', '',                                                'l'],
    );
    my $rows = '';
    for my $w (@{$s->{workers}}) {
        my $m     = $w->{memory} // {};
        my $cpu   = $w->{cpu} ? sprintf('%.2f', $w->{cpu}{user} + $w->{cpu}{system}) : '-';
        my @cells = (
            "$w->{slot}-$w->{generation}",
            $w->{pid},
            "$w->{conn_requests}/$w->{requests}/$w->{slot_requests}",
            $w->{state},
            $cpu,
            defined $w->{since} ? int $w->{since} : '-',
            sprintf('%.1f', $w->{last_micros} / 1000),
            int($w->{slot_micros} / 1000),
            sprintf('%.2f', $w->{bytes} / 1048576),
            sprintf('%.2f', $w->{slot_bytes} / 1048576),
            (   map { defined $m->{$_} ? sprintf('%.1f', $m->{$_} / 1024) : '-' }
                    qw(rss pss shared private)
            ),
            $w->{client}  || '-',
            $w->{vhost}   || '-',
            $w->{request} || '-',
        );
        my $class = $w->{state} eq '_' ? '' : ' class="busy"';
        $rows .= "<tr$class>" . join(
            '',
            map {
                my $l = $_ >= 14 ? ' class="l' . ($_ == 15 ? ' req' : '') . '"' : '';
                "<td$l>" . escape($cells[$_]) . '</td>'
            } 0 .. $#cells
        ) . "</tr>\n";
    }
    my $th = join '', map {
        my $title = $_->[1] ? ' title="' . escape($_->[1]) . '"' : '';
        my $class = $_->[2] ? ' class="l"'                       : '';
        "<th$class$title>$_->[0]</th>"
    } @head;
    my $key = join '; ', map {"$_->[0]: $_->[1]"} grep { $_->[1] } @head;
    return
        "<h2>Workers</h2>\n<div class=\"table\"><table id=\"workers\">\n<thead><tr>$th</tr></thead>\n"
        . "<tbody>\n$rows</tbody></table></div>\n<p class=\"key\">"
        . escape($key)
        . "</p>\n";
}

sub escape ($text) {
    my %entity = ('&' => '&amp;', '<' => '&lt;', '>' => '&gt;', '"' => '&quot;', "'" => '&#39;');
    return ($text // '') =~ s/([&<>"'])/$entity{$1}/gr
        =~ s/([\x00-\x08\x0b\x0c\x0e-\x1f\x7f])/sprintf('&#%d;', 0xfffd)/ger;
}

sub _kb ($bytes) {
    return sprintf('%.1f MB', $bytes / 1048576) if $bytes >= 1048576;
    return sprintf('%.1f kB', $bytes / 1024)    if $bytes >= 1024;
    return sprintf('%d B',    $bytes);
}

1;

__END__

=head1 NAME

Perennial::Status::HTML - the server-status page in HTML

=head1 SYNOPSIS

    my $html = Perennial::Status::HTML::page(summary($board, memory => 1), $env, $refresh);

=head1 DESCRIPTION

Lays out a L<Perennial::Status::Report> summary as Apache's mod_status page with
ExtendedStatus on: version, times, generation, uptime, load, totals, CPU, rates, busy and
idle workers and the listen queues; the scoreboard string and its legend; and a table with a
row per worker (slot and generation, pid, requests per connection, worker and slot, state,
CPU, seconds since the request began, the last request's milliseconds, bytes, memory, client
and request line, and the virtual host). Everything from a client is escaped.

=head1 FUNCTIONS

=head2 escape

    my $safe = Perennial::Status::HTML::escape($from_a_client);

Escapes C<< & < > " ' >> and replaces control characters.

=head2 page

    my $html = Perennial::Status::HTML::page($summary, $env, $refresh_seconds_or_undef);

=cut
