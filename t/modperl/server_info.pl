#!/usr/bin/perl
# Apache2::URI, APR::URI, the connection's ends, the server's settings, Apache2::ServerUtil's
# ids and defines, and the request's flags and PerlOptions, as mod_perl 2 answers them
use strict;
use Apache2::RequestRec  ();
use Apache2::RequestUtil ();
use Apache2::Connection  ();
use Apache2::ServerRec   ();
use Apache2::ServerUtil  ();
use Apache2::URI         ();
use APR::URI             ();
use APR::SockAddr        ();
use APR::Const -compile => qw(URI_UNP_REVEALPASSWORD URI_UNP_OMITSITEPART URI_UNP_OMITQUERY);
my $r = shift;
my ($c, $s) = ($r->connection, $r->server);
my $uri  = $r->parsed_uri;
my $made = APR::URI->parse($r->pool, 'http://u:pw@h.example:8080/a/b?q=1#f');
$r->content_type('text/plain');
my $was = $r->no_local_copy;
$r->no_local_copy(1);
print join(
    "\n",
    'construct_server: ' . ($r->construct_server =~ s/:\d+\z/:PORT/r),
    'construct_server h 80: ' . $r->construct_server('h', 80),
    'construct_server h 8080: ' . $r->construct_server('h', 8080),
    'construct_url: '
        . ($r->construct_url('/x') eq 'http://' . $r->construct_server . '/x' ? 'yes' : 'no'),
    'parsed path: ' . $uri->path,
    'parsed query: ' . ($uri->query // 'undef'),
    'parsed rpath: ' . $uri->rpath,
    'parsed host: ' . ($uri->hostname // 'undef'),
    'parsed unparse: ' . $uri->unparse,
    'made: '
        . join(' ',
        map { $_ // 'undef' } $made->scheme, $made->user,     $made->password,
        $made->hostname,                     $made->port,     $made->path,
        $made->query,                        $made->fragment, $made->hostinfo),
    'made unparse: ' . $made->unparse,
    'made revealed: ' . $made->unparse(APR::Const::URI_UNP_REVEALPASSWORD),
    'made no site: ' . $made->unparse(APR::Const::URI_UNP_OMITSITEPART),
    'made no query: ' . $made->unparse(APR::Const::URI_UNP_OMITQUERY),
    'client: ' . $c->client_addr->ip_get . ' ' . ($c->client_addr->port > 0 ? 'port' : 'no port'),
    'local: '
        . $c->local_addr->ip_get . ' '
        . ($c->local_addr->port == $r->get_server_port ? 'its port' : 'another port'),
    'remote_host: ' . ($c->remote_host // 'undef'),
    'timeout: ' . $s->timeout,
    'keep_alive: '
        . ($s->keep_alive ? 'on' : 'off') . ' '
        . $s->keep_alive_timeout . ' '
        . $s->keep_alive_max,
    'loglevel: ' . $s->loglevel,
    'names: ' . (defined $s->names ? join(',', 'list', @{$s->names}) : 'undef'),
    'defined: '
        . Apache2::ServerUtil::exists_config_define('APITEST') . ' '
        . Apache2::ServerUtil::exists_config_define('NOT_DEFINED'),
    'user_id: '
        . (Apache2::ServerUtil->user_id == $< ? 'the worker\'s' : Apache2::ServerUtil->user_id),
    'allowed: ' . $r->allowed,
    'assbackwards: ' . $r->assbackwards,
    'no_local_copy: ' . $was . ' ' . $r->no_local_copy,
    'options: '
        . join(' ',
        map { "$_=" . $r->is_perl_option_enabled($_) }
            qw(ParseHeaders SetupEnv MergeHandlers GlobalRequest))
    ),
    "\n";
