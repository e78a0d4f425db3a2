#!/usr/bin/perl
# Apache2::Util and the request's client fields, as handler code and scripts use them
use strict;
use Apache2::RequestRec ();
use Apache2::ServerUtil ();
use Apache2::Util       ();
my $r = shift;
$r->status_line('299 Custom');    # Alone, it leaves the status as it was: 200
$r->content_type('text/plain');
print join("\n",
    'ht_time: ' . Apache2::Util::ht_time($r->pool, 1_000_000_000),
    'ht_time local format: ' . Apache2::Util::ht_time($r->pool, 1_000_000_000, '%Y-%m-%d %H:%M', 1),
    'escape_path: ' . Apache2::Util::escape_path('/a b/c?d#e%f~g', $r->pool),
    'useragent_ip: ' . $r->useragent_ip,
    'remote logname: ' . ($r->get_remote_logname // 'undef'),
    'restarted: ' .      (Apache2::ServerUtil::restart_count() > 1 ? 'yes' : 'no')),
    "\n";
